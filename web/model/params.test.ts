import { describe, expect, it } from 'vitest';
import type { ParamInfo } from '../engine/types';
import { defaultParams, nonDefault, publishedSetups, stepParams, validateAll, validateParam } from './params';

const P: ParamInfo[] = [
  { name: 'bs', type: 'int', default: 4096, min: 512, max: 1048576, multiple_of: 512, unit: 'bytes', help: '' },
  { name: 'device', type: 'enum', default: 'nvme-dc', values: ['nvme-dc', 'consumer-ssd'], help: '' },
  { name: 'threshold', type: 'int-or-inf', default: 4096, min: 1, help: '' },
  { name: 'scale', type: 'float', default: 1, min: 0, max: 1, min_exclusive: true, help: '' },
  { name: 'share', type: 'float', default: 0, min: 0, max: 1, help: '' },
  { name: 'fsync', type: 'bool', default: false, help: '' },
];

describe('params', () => {
  it('gives default text for every type', () => {
    expect(defaultParams(P)).toEqual({ bs: '4096', device: 'nvme-dc', threshold: '4096', scale: '1', share: '0', fsync: 'false' });
  });

  it('accepts valid values', () => {
    expect(validateAll(P, { bs: '8192', device: 'consumer-ssd', threshold: 'inf', scale: '0.25', fsync: 'true' })).toEqual({});
  });

  it('explains each kind of bad value', () => {
    const [bs, dev, thr, scale, share, fsync] = P as [ParamInfo, ParamInfo, ParamInfo, ParamInfo, ParamInfo, ParamInfo];
    expect(validateParam(share, '0')).toBeNull(); // an inclusive minimum
    expect(validateParam(bs, '4k')).toBeNull(); // K, M, G: x1024, as the engine reads them
    expect(validateParam(bs, '4KB')).toMatch(/whole number/);
    expect(validateParam(bs, '2G')).toMatch(/at most 1048576 bytes/); // the range after the suffix
    expect(validateParam(bs, ' 4096')).toMatch(/spaces/);
    expect(validateParam(bs, '100')).toMatch(/at least 512 bytes/);
    expect(validateParam(bs, '527')).toBe('bs must be a multiple of 512 bytes.');
    expect(validateParam(bs, '1536')).toBeNull();
    expect(validateParam(bs, '')).toMatch(/needs a value/);
    expect(validateParam(dev, 'floppy')).toMatch(/one of: nvme-dc, consumer-ssd/);
    expect(validateParam(thr, '0')).toMatch(/at least 1/);
    expect(validateParam(thr, 'infinity')).toBeNull();
    expect(validateParam(thr, 'Inf')).toMatch(/"inf"/);
    expect(validateParam(thr, '9223372036854775808')).toBeNull(); // no max declared: unbounded, exactly
    expect(validateParam(scale, '0')).toMatch(/greater than 0/);
    expect(validateParam(scale, '1.5')).toMatch(/at most 1/);
    expect(validateParam(scale, 'abc')).toMatch(/a number/);
    expect(validateParam(scale, '0x1p-1')).toMatch(/a number/);
    expect(validateParam(scale, '1e999')).toMatch(/at most 1/); // overflow is out of range
    expect(validateParam(fsync, 'on')).toBeNull();
    expect(validateParam(fsync, 'maybe')).toMatch(/true or false/);
    expect(validateAll(P, { nope: '1' })).toEqual({ nope: 'There is no parameter called "nope".' });
  });

  it('keeps only non-default values for URLs', () => {
    expect(nonDefault(P, { ...defaultParams(P), bs: '8192' })).toEqual({ bs: '8192' });
  });

  it('steps through a list of parameter sets, stopping at the ends', () => {
    const sets = [{ rw: 'randread', iodepth: '1' }, { rw: 'randread', iodepth: '128' }, { rw: 'randwrite', iodepth: '1' }];
    const at = (rw: string, iodepth: string) => ({ device: 'nvme-dc', rw, iodepth, bs: '4096' });
    expect(stepParams(sets, at('randread', '1'), 1)).toEqual(sets[1]);
    expect(stepParams(sets, at('randread', '128'), -1)).toEqual(sets[0]);
    expect(stepParams(sets, at('randwrite', '1'), 1)).toBeNull(); // the last: no wrap
    expect(stepParams(sets, at('randread', '1'), -1)).toBeNull();
    // a setting in no set starts from the first (next) or the last (previous)
    expect(stepParams(sets, at('write', '7'), 1)).toEqual(sets[0]);
    expect(stepParams(sets, at('write', '7'), -1)).toEqual(sets[2]);
    expect(stepParams([], at('randread', '1'), 1)).toBeNull();
  });

  it('lists the published rows\' distinct setups in order', () => {
    const row = (variant: 'before' | 'after', params: Record<string, string | number>) => ({ variant, params, metric: 'm', value: 1, source: 's', tolerance: 0.1 });
    const info = {
      name: 'x', title: '', seed: '004', variants: ['before', 'after'] as ('before' | 'after')[], params: P, metrics: [],
      published: [row('before', {}), row('before', { bs: 8192 }), row('after', { bs: 8192 }), row('after', { threshold: Infinity }), row('before', { bs: 8192, device: 'consumer-ssd' })],
    };
    expect(publishedSetups(info as never)).toEqual([{ bs: '8192' }, { threshold: 'inf' }, { bs: '8192', device: 'consumer-ssd' }]);
  });
});
