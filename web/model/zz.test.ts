import { readFileSync } from 'node:fs';
import { it } from 'vitest';
import { withoutClaimMarks } from './lessonClaims';
import { spoilersIn } from './lessonSpoilers';
it('old lessons', () => {
  let n = 0, leaks = 0;
  for (const f of ['bonnie', 'qgroup-drop', 'receive', 'sparse-cp', 'ssd-4k-write', 'untar']) {
    const L = JSON.parse(readFileSync(`/tmp/oldl/${f}.json`, 'utf8'));
    const M = JSON.parse(readFileSync(`/tmp/lm/${f}.json`, 'utf8'));
    L.steps.forEach((s: any, i: number) => {
      const p = s.prediction; if (!p) return; n++;
      const v = M[i][p.variant][p.metric];
      const before = [L.title, s.title, withoutClaimMarks(s.text), withoutClaimMarks(s.look), p.prompt, s.diff?.title ?? '', s.diff?.text ?? ''].join('\n');
      const sp = spoilersIn(before, v, p.unit);
      if (sp.length) { leaks++; console.log(f, i + 1, v, sp.map((x) => x.shown)); }
    });
  }
  console.log(`${leaks} of ${n} prediction steps give the answer before the run`);
});
