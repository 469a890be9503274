/*
 * testHook.ts - a small typed window hook for the end-to-end tests: what
 * the page has loaded and the last results, readable without scraping text.
 */
import type { RunResult, Variant } from '../engine/types';

export interface LabTestHook {
  experiments: string[];
  lessons: string[];
  lastRun: { experiment: string; results: Partial<Record<Variant, RunResult>> } | null;
  /** Check outcomes of lesson steps run in this page, by "lesson/step". */
  lessonChecks: Record<string, boolean[]>;
  /** The numbers each step's text states about its run, checked on the run drawn. */
  lessonClaims: Record<string, { text: string; ok: boolean; shown: string }[]>;
  /** The open replay's first divergence (an event index; -1 none). */
  replayDivergence?: number;
  /** The engine pool's workers (web/engine/pool.ts). */
  workers?: number;
  /** The page's own recording for its pictures: its window, host time, events per kernel. */
  pageRecording?: { window: string; wallMs: number; events: number[] };
  /** The sandbox: host time of its last script run (engine, both kernels), and
   * of its last redraw after a command (the trees drawn), in ms. */
  sandboxRunMs?: number;
  sandboxDrawMs?: number;
}

declare global {
  interface Window {
    __lab?: LabTestHook;
  }
}

export function testHook(): LabTestHook {
  if (typeof window === 'undefined') return { experiments: [], lessons: [], lastRun: null, lessonChecks: {}, lessonClaims: {} };
  window.__lab ??= { experiments: [], lessons: [], lastRun: null, lessonChecks: {}, lessonClaims: {} };
  return window.__lab;
}
