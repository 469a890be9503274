/*
 * generate.test.ts - writes the views' snapshot fixtures (one small run of
 * each experiment, classroom size, numbers rounded to 4 significant
 * digits) from the engine's WASM build. Not part of the suite: it runs
 * only when asked, after a change to what an experiment reports:
 *
 *     npm run view-fixtures        # MAKE_VIEW_FIXTURES=1 vitest run web/views/__fixtures__
 *
 * then `npx vitest run web/views/snapshots.test.tsx -u` redraws the
 * snapshots from them, and the diff shows what the change did to each
 * picture.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ExperimentInfo, RunResult } from '../../engine/types';
import { loadNodeBridge } from '../../engine/node';
import { FIXTURE_SETUPS, fixturePath, roundDeep, type ViewFixture } from './fixtures';

describe.skipIf(!process.env.MAKE_VIEW_FIXTURES)('view fixtures', () => {
  it('runs each experiment at its fixture setup and writes it', async () => {
    const b = await loadNodeBridge();
    const list = b.list();
    for (const [name, setup] of Object.entries(FIXTURE_SETUPS)) {
      const info = list.find((e) => e.name === name);
      expect(info, name).toBeDefined();
      const runs: ViewFixture['runs'] = {};
      for (const variant of info!.variants) {
        const r: RunResult = b.run({ experiment: name, variant, params: setup.params, seed: 1 });
        runs[variant] = roundDeep({ metrics: r.metrics, simNs: r.simNs, events: r.events, details: r.details, wallMs: 0 }) as RunResult;
      }
      // the published rows the view can use: those of this setup's device, if
      // any, and of the device page one metric a job (its job list; fio lists 600)
      const published = info!.published.filter(
        (p) => (!setup.params.device || p.params.device === undefined || p.params.device === setup.params.device) && (name !== 'fio' || p.metric === 'iops'),
      );
      const fixture: ViewFixture = { experiment: name, params: setup.params, seed: 1, info: { ...info!, published } as ExperimentInfo, runs };
      writeFileSync(fixturePath(name), `${JSON.stringify(fixture)}\n`);
    }
  }, 600_000);
});
