/*
 * protocol.ts - the typed message protocol between the page and the engine
 * worker (cf. ffmpeg.wasm): one enum of message types, one interface per
 * payload. Every request carries an id; every response names the request it
 * answers, so the client can key its Promises by id.
 */
import type { CollectSpec, ExperimentInfo, LabErrorInfo, RunResult, RunSpec, WorkEstimate } from './types';

export enum MsgType {
  /* page -> worker */
  List = 'list',
  Run = 'run',
  Cancel = 'cancel',
  Estimate = 'estimate',
  /* worker -> page */
  ListDone = 'list-done',
  EstimateDone = 'estimate-done',
  Progress = 'progress',
  RunDone = 'run-done',
  Error = 'error',
}

export interface ListRequest {
  id: number;
  type: MsgType.List;
}

export interface RunRequest {
  id: number;
  type: MsgType.Run;
  spec: RunSpec;
  /** Snapshots / trace to collect once the run has finished. */
  collect?: CollectSpec;
  /** Target host time per lab_step slice, ms (default 25). */
  sliceMs?: number;
}

export interface CancelRequest {
  id: number;
  type: MsgType.Cancel;
  /** The id of the run to cancel. */
  target: number;
}

/** lab_estimate of a setting (nothing is run). */
export interface EstimateRequest {
  id: number;
  type: MsgType.Estimate;
  experiment: string;
  params: Record<string, string>;
}

/**
 * The engine's WebAssembly.Module, compiled once by the page and sent to
 * each worker it starts (a compiled module crosses postMessage without
 * being compiled again); null: the page could not compile it, the worker
 * loads the file itself.
 */
export interface ModuleMessage {
  type: 'module';
  module: WebAssembly.Module | null;
}

export const isModuleMessage = (m: unknown): m is ModuleMessage => typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'module';

export type WorkerRequest = ListRequest | RunRequest | CancelRequest | EstimateRequest;

export interface EstimateDone {
  id: number;
  type: MsgType.EstimateDone;
  estimate: WorkEstimate;
}

export interface ListDone {
  id: number;
  type: MsgType.ListDone;
  experiments: ExperimentInfo[];
  /** the engine's error codes by name (lab.h), for the page's own errors */
  errors: Record<string, number>;
}

export interface Progress {
  id: number;
  type: MsgType.Progress;
  /** The experiment's own estimate in [0,1]. */
  progress: number;
  /** lab_step slices done so far. */
  slices: number;
}

export interface RunDone {
  id: number;
  type: MsgType.RunDone;
  result: RunResult;
}

export interface ErrorResponse {
  id: number;
  type: MsgType.Error;
  error: LabErrorInfo;
}

export type WorkerResponse = ListDone | Progress | RunDone | EstimateDone | ErrorResponse;
