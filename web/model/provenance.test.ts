import { describe, expect, it } from 'vitest';
import type { ParamInfo, PublishedRow } from '../engine/types';
import { fmtChange, fmtNs, fmtNum, fmtPct } from './format';
import { publishedFor, relError, rowMatches } from './provenance';

const P: ParamInfo[] = [
  { name: 'device', type: 'enum', default: 'nvme-dc', values: ['nvme-dc', 'consumer-ssd'], help: '' },
  { name: 'bs', type: 'int', default: 4096, min: 512, max: 4194304, help: '' },
  { name: 'ios', type: 'int', default: 20000, min: 100, max: 1e7, help: '' },
  { name: 'threshold', type: 'int-or-inf', default: 4096, min: 1, help: '' },
];
const row = (params: PublishedRow['params'], variant: PublishedRow['variant'] = 'base', metric = 'iops'): PublishedRow => ({
  variant,
  params,
  metric,
  value: 100,
  source: 's',
  tolerance: 0.15,
});

describe('provenance', () => {
  it('matches a published row when its parameters equal the run and the rest are defaults', () => {
    const r = row({ device: 'consumer-ssd', bs: 4096 });
    expect(rowMatches(r, 'base', P, { device: 'consumer-ssd' })).toBe(true);
    expect(rowMatches(r, 'base', P, { device: 'consumer-ssd', bs: '4096' })).toBe(true);
    expect(rowMatches(r, 'base', P, { device: 'nvme-dc' })).toBe(false);
    expect(rowMatches(r, 'after', P, { device: 'consumer-ssd' })).toBe(false);
    // a parameter the row does not name must be at its default
    expect(rowMatches(r, 'base', P, { device: 'consumer-ssd', ios: '500' })).toBe(false);
  });

  it('compares inf and numbers by value', () => {
    expect(rowMatches(row({ threshold: Infinity }, 'after'), 'after', P, { threshold: 'inf' })).toBe(true);
    expect(rowMatches(row({ threshold: 'inf' }, 'after'), 'after', P, { threshold: 'inf' })).toBe(true);
    expect(rowMatches(row({ threshold: 8192 }, 'after'), 'after', P, { threshold: '8192.0' })).toBe(true);
  });

  it('selects rows by metric and reports the error', () => {
    const rows = [row({}, 'base', 'iops'), row({}, 'base', 'clat_p50_us'), row({ bs: 8192 }, 'base', 'iops')];
    expect(publishedFor(rows, 'iops', 'base', P, {})).toEqual([{ row: rows[0], differs: [] }]);
    // a run that changed a setting the row does not name: shown apart, saying what differs
    expect(publishedFor(rows, 'iops', 'base', P, { ios: '500' })).toEqual([{ row: rows[0], differs: ['ios=20000'] }]);
    expect(relError(115, 100)).toBeCloseTo(0.15, 12);
  });
});

describe('format', () => {
  it('formats numbers, durations and changes for people', () => {
    expect(fmtNum(64124.1)).toBe('64,124');
    expect(fmtNum(12.7947)).toBe('12.8');
    expect(fmtNum(undefined)).toBe('–');
    expect(fmtNum(Infinity)).toBe('∞');
    expect(fmtNs(312_000_000)).toBe('312 ms');
    expect(fmtNs(2_500_000_000)).toBe('2.5 s');
    expect(fmtChange(770, 146)).toBe('5.27× less');
    expect(fmtChange(1, 2)).toBe('2× more');
    expect(fmtChange(15917, 15909)).toBe('0.05% less');
    expect(fmtChange(100, 106)).toBe('6% more');
    expect(fmtChange(100, 111)).toBe('1.11× more');
    expect(fmtPct(-0.2)).toBe('−20%');
    expect(fmtPct(0.14)).toBe('+14%');
  });
});
