/*
 * The page and the engine agree on every value: one table of parameter
 * texts (each experiment's ranges from `list`, their edges, suffixes,
 * overflow, malformed numbers) goes through the form's parseParam and
 * through lab_open of the real WASM engine, and both must accept or refuse
 * it alike, for the same reason (syntax = LAB_EINVAL, range = LAB_ERANGE).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Bridge } from '../engine/bridge';
import { loadNodeBridge } from '../engine/node';
import { LabError, type ExperimentInfo, type ParamInfo } from '../engine/types';
import { parseParam } from './params';

let b: Bridge;
beforeAll(async () => {
  b = await loadNodeBridge();
});

/** Settings that keep an experiment's setup cheap (the value under test overrides them). */
const CHEAP: Record<string, Record<string, string>> = {
  'qgroup-drop': { subvols: '1', files: '1' },
  fio: { ios: '100' },
  torture: { ops: '1' },
  'sparse-cp': { file_mib: '1' },
  receive: { writers: '1', files_per_writer: '10' },
};

/** Texts around a numeric parameter's declared range and grammar. */
function numericTable(p: ParamInfo): string[] {
  const lo = p.min ?? 0;
  const hi = p.max ?? 0;
  const t = new Set<string>([
    String(lo), String(hi), `+${hi}`, '-0', '0', '1', '-1', '',
    ' 1', '1 ', '0x10', '1_0', '--1', 'one', 'NaN', 'nan', 'inf', 'Inf', 'infinity', '-inf',
    '1e3', '1E3', '1.', '.5', '.', '1e', '1e+', '1,5', '١',
    '9007199254740991', '9007199254740992', '9007199254740993', '9223372036854775807', '9223372036854775808',
    '18446744073709551615', '18446744073709551616', '17179869184G', '16000000000G', '8388607G', '8388608G',
    '4K', '4k', '4KB', '1M', '1g', 'K', '-1K', `${'9'.repeat(400)}`, `${'0'.repeat(300)}7`,
    '1e999', '-1e999', '1e-400', '0.1', '0.5', '0.9999999999999999', '1.0000000000000002',
  ]);
  if (Number.isInteger(lo)) for (const d of [-1, 1]) t.add(String(lo + d));
  if (Number.isInteger(hi)) for (const d of [-1, 1]) t.add(String(hi + d));
  if (Number.isInteger(hi) && hi % 1024 === 0) {
    t.add(`${hi / 1024}K`);
    t.add(`${hi / 1024 + 1}K`);
  }
  if (p.multiple_of) {
    t.add(String(lo + p.multiple_of));
    t.add(String(lo + p.multiple_of + 1));
  }
  t.add(String(lo / 2));
  t.add(String(hi * (1 + 2 ** -52)));
  t.add(String(hi).concat('.0'));
  t.add(lo.toExponential());
  return [...t];
}

function table(p: ParamInfo): string[] {
  if (p.type === 'enum') return [...(p.values ?? []), '', 'x', `${p.values?.[0] ?? ''} `, (p.values?.[0] ?? '').toUpperCase(), '0', '\u202e'];
  if (p.type === 'bool') return ['true', 'false', '1', '0', 'on', 'off', 'yes', 'TRUE', '', '2', ' true'];
  return numericTable(p);
}

/** The engine's verdict on one setting: accepted, or its code as a kind. */
function engine(e: ExperimentInfo, name: string, text: string): 'ok' | 'syntax' | 'range' | string {
  const params = { ...(CHEAP[e.name] ?? {}), [name]: text };
  try {
    b.close(b.open({ experiment: e.name, variant: e.variants[0]!, params, seed: 1 }));
    return 'ok';
  } catch (err) {
    const le = LabError.from(err);
    if (le.codeName === 'LAB_EINVAL') return 'syntax';
    // a limit between two parameters (untar: fs_used_gib below fs_gib) is
    // the engine's to check: its one-line refusal names both, and the page
    // shows it; each value on its own is in range
    const others = e.params.filter((q) => q.name !== name && new RegExp(`\\b${q.name}\\b`).test(le.message));
    if (le.codeName === 'LAB_ERANGE' && others.length > 0 && le.message.includes(name) && !le.message.includes('\n')) return 'pair';
    if (le.codeName === 'LAB_ERANGE') return 'range';
    return `${le.codeName}: ${le.message}`;
  }
}

describe('the form and the engine read parameter values alike', () => {
  it('on every experiment parameter, over a table of edges', () => {
    const disagree: string[] = [];
    let n = 0;
    for (const e of b.list()) {
      for (const p of e.params) {
        for (const text of table(p)) {
          // "\n" would start another setting: the page never sends one (the form refuses it)
          const page = parseParam(p, text);
          const pageKind = page.ok ? 'ok' : page.kind;
          const eng = engine(e, p.name, text);
          n++;
          if (pageKind !== eng && !(pageKind === 'ok' && eng === 'pair')) disagree.push(`${e.name}.${p.name}=${JSON.stringify(text)}: page ${pageKind}, engine ${eng}`);
        }
      }
    }
    expect(disagree).toEqual([]);
    expect(n).toBeGreaterThan(1000);
  });

  it('the issue\'s values: a silent wrap, a max, a huge integer', () => {
    const qd = b.list().find((e) => e.name === 'qgroup-drop')!;
    const thr = qd.params.find((p) => p.name === 'threshold')!;
    expect(thr.max).toBe(Number.MAX_SAFE_INTEGER);
    for (const v of ['17179869184G', '9223372036854775808']) {
      expect(parseParam(thr, v)).toMatchObject({ ok: false, kind: 'range' });
      expect(engine(qd, 'threshold', v)).toBe('range');
    }
    expect(parseParam(thr, '8388607G')).toEqual({ ok: true, value: 8388607 * 2 ** 30 });
  });
});
