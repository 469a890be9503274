/*
 * engine.ts - the page's one EngineClient, talking to the engine worker.
 */
import { EngineClient, type WorkerLike } from '../engine/client';

export const engine = new EngineClient(
  () => new Worker(new URL('../engine/worker.ts', import.meta.url), { type: 'module', name: 'lab-engine' }) as unknown as WorkerLike,
);
