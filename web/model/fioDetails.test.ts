import { describe, expect, it } from 'vitest';
import { deviceCounters, keyProb, pLabel, readFioDetails } from './fioDetails';

describe('fio details', () => {
  it('names fio percentile keys', () => {
    expect(keyProb('p50')).toBe(0.5);
    expect(keyProb('p999')).toBeCloseTo(0.999, 12);
    expect(keyProb('p9999')).toBeCloseTo(0.9999, 12);
    expect(keyProb('avg')).toBeUndefined();
    expect(pLabel(0.999)).toBe('p99.9');
  });

  it('reads the CDF and the measured point, skipping nulls', () => {
    const pic = readFioDetails({
      profile: 'nvme-dc',
      title: 'Intel P4510',
      cdf: [[0, 5], [0.5, 9], [1, 90], ['x', 1], [2, 3]],
      device: { writes: 100, busy_ns: 5 },
      measured: { iops: 80100, bw_mib_s: 313, clat_us: { avg: 9.82, p50: 9, p90: 10, p99: 48, p999: null }, fitted: true, source: 'p4510_legacy/4k_w_1.txt' },
    });
    expect(pic.simulated).toEqual([{ p: 0, us: 5 }, { p: 0.5, us: 9 }, { p: 1, us: 90 }]);
    expect(pic.measured?.markers.map((m) => m.label)).toEqual(['p50', 'p90', 'p99']);
    expect(pic.measured?.clatAvgUs).toBe(9.82);
    expect(pic.measured?.usedForFit).toBe(true);
    expect(pic.device).toEqual({ writes: 100, busy_ns: 5 });
  });

  it('says why a point was not fitted', () => {
    const m = (why: unknown) =>
      readFioDetails({ measured: { clat_us: { p50: 60 }, fitted: false, why, source: 'x' } }).measured?.notFitted;
    expect(m('held out: depths 4 and 64, and 8 jobs')).toEqual({ kind: 'held out', reason: 'depths 4 and 64, and 8 jobs' });
    expect(m('outside the model: the pinned run')).toEqual({ kind: 'outside the model', reason: 'the pinned run' });
    expect(m(undefined)).toEqual({ kind: 'held out', reason: '' });
    const fitted = readFioDetails({ measured: { clat_us: { p50: 60 }, fitted: true, why: '', source: 'x' } }).measured;
    expect(fitted?.notFitted).toBeUndefined();
  });

  it('survives a missing measurement and garbage', () => {
    const pic = readFioDetails({ measured: null, cdf: 'nope', measured_also: 'nope' });
    expect(pic.measured).toBeNull();
    expect(pic.simulated).toEqual([]);
    expect(pic.others).toEqual([]);
  });

  it('reads the same job\'s other measured runs, skipping what is not a point', () => {
    const pic = readFioDetails({
      measured: { clat_us: { p50: 4752, p99: 18744 }, fitted: true, why: '', source: '4G/4k_w_9.txt' },
      measured_also: [{ clat_us: { p50: 4555, p99: 53740 }, fitted: false, why: 'held out: the replicate depth-128 run', source: '5G/4k_w_9.txt' }, null, 7],
    });
    expect(pic.others).toHaveLength(1);
    expect(pic.others[0]?.source).toBe('5G/4k_w_9.txt');
    expect(pic.others[0]?.markers).toEqual([{ p: 0.5, us: 4555, label: 'p50' }, { p: 0.99, us: 53740, label: 'p99' }]);
    expect(pic.others[0]?.notFitted).toEqual({ kind: 'held out', reason: 'the replicate depth-128 run' });
  });

  it("words the device's counters as a student reads them", () => {
    const c = deviceCounters({ reads: 200002, writes: 0, busy_ns: 15728142495, max_inflight: 1, odd_thing: 3 }, 15.9e9);
    expect(c.map((x) => [x.label, x.value])).toEqual([
      ['reads served', '200,002'],
      ['writes served', '0'],
      ['busy (a request in service)', '15.7 s of the 15.9 s run (98.9%)'],
      ['most requests in flight at once', '1'],
      ['odd thing', '3'],
    ]);
    expect(c.some((x) => /busy_ns|15,728/.test(x.value + x.label))).toBe(false);
  });
});
