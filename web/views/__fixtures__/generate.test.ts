/*
 * generate.test.ts - writes the views' snapshot fixtures (one small run of
 * each experiment, classroom size, numbers rounded to 4 significant
 * digits) from the engine's WASM build. Not part of the suite: it runs
 * only when asked, after a change to what an experiment reports:
 *
 *     npm run view-fixtures        # MAKE_VIEW_FIXTURES=1 vitest run web/views/__fixtures__
 *
 * The pages' recorded pictures (<experiment>.picture.json) are recorded
 * from the committed fixture's setup as the page records them (its
 * moment, its kinds of event), at most PICTURE_EVENTS events a kernel;
 * `-t pictures` writes only those.
 *
 * then `npx vitest run web/views/snapshots.test.tsx -u` redraws the
 * snapshots from them, and the diff shows what the change did to each
 * picture.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ExperimentInfo, RunResult } from '../../engine/types';
import { loadNodeBridge } from '../../engine/node';
import { PAGE_RECORDINGS } from '../replay/pageRecording';
import { encodeTrace, FIXTURE_SETUPS, fixturePath, PICTURE_EVENTS, PICTURE_SETUPS, picturePath, roundDeep, type PictureFixture, type ViewFixture } from './fixtures';

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

  it('records each page picture from its fixture setup and writes it', async () => {
    const b = await loadNodeBridge();
    const list = b.list();
    for (const [name, spec] of Object.entries(PAGE_RECORDINGS)) {
      const params = PICTURE_SETUPS[name]!.params;
      const variants = list.find((e) => e.name === name)!.variants;
      const runs = Object.fromEntries(variants.map((variant) => [variant, b.run({ experiment: name, variant, params, seed: 1 })]));
      const start = spec.start(runs, params);
      expect(start, `${name}: its moment happens at the fixture's setup`).not.toBeNull();
      const sides: PictureFixture['sides'] = [];
      for (const variant of variants) {
        const r = b.run({ experiment: name, variant, params, seed: 1 }, 1_000_000, {
          maxEvents: Math.min(spec.maxEvents ?? PICTURE_EVENTS, PICTURE_SETUPS[name]!.events ?? PICTURE_EVENTS),
          only: spec.only,
          stopWhenFull: true,
          ...start!.record,
        });
        expect(r.recording?.n, `${name} ${variant} recorded`).toBeGreaterThan(0);
        console.log(name, variant, r.recording!.n, 'events', r.recording!.complete ? 'complete' : `cut (${r.recording!.unkept} more)`);
        sides.push({ variant, trace: encodeTrace(r.recording!) });
      }
      const fixture: PictureFixture = { experiment: name, params, window: start!.window, fromFirst: start!.fromFirst, sides };
      writeFileSync(picturePath(name), `${JSON.stringify(fixture)}\n`);
    }
  }, 600_000);
});
