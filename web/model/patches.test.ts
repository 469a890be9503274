import { describe, expect, it } from 'vitest';
import type { ExperimentInfo, PatchInfo } from '../engine/types';
import { commitUrl, patchExperiments, patchToggles } from './patches';

const patch = (over: Partial<PatchInfo>): PatchInfo => ({
  id: 'P_X',
  seed: '004',
  series: '1/9',
  commit: null,
  title: 't',
  help: 'h',
  switch: null,
  applied: { before: false, after: true },
  ...over,
});

const info = (patches: PatchInfo[]): ExperimentInfo => ({
  name: 'x',
  seed: '004',
  title: 'x',
  variants: ['before', 'after'],
  params: [],
  metrics: [],
  metricInfo: [],
  published: [],
  patches,
});

describe('patchToggles', () => {
  it('a switch follows its parameter; a patch without one is a label that says why it has none', () => {
    const t = patchToggles(
      info([
        patch({ id: 'A', switch: 'p1', effect: 'model', commit: '0123456789ab' }),
        patch({ id: 'B', effect: 'none' }),
        patch({ id: 'C', effect: 'model' }),
      ]),
      { p1: 'false' },
    );
    expect(t.map((x) => [x.key, x.param, x.on, x.fixed])).toEqual([
      ['A', 'p1', false, null],
      ['B', null, true, 'none'],
      ['C', null, true, 'pair'],
    ]);
    expect(t[0]?.href).toBe(commitUrl('0123456789ab'));
  });
});

describe('patchExperiments', () => {
  it('lists the patch experiments in seed order and leaves the substrate out', () => {
    const e = (name: string, seed: string): ExperimentInfo => ({ ...info([]), name, seed });
    const list = [e('bonnie', '001'), e('fio', '-'), e('sparse-cp', '004'), e('untar', '000')];
    expect(patchExperiments(list).map((x) => x.name)).toEqual(['untar', 'bonnie', 'sparse-cp']);
    expect(patchExperiments(null)).toEqual([]);
  });
});
