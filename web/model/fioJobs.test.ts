import { describe, expect, it } from 'vitest';
import type { PublishedRow } from '../engine/types';
import { fmtBytes, measuredJobs } from './fioJobs';

const row = (params: PublishedRow['params'], metric = 'iops'): PublishedRow => ({ variant: 'base', params, metric, value: 1, source: `src-${JSON.stringify(params)}`, tolerance: 0.15 });

describe('measured fio jobs', () => {
  it('lists each measured job of a device once, in a stable order', () => {
    const rows = [
      row({ device: 'nvme-dc', rw: 'randwrite', bs: 4096, iodepth: 1, numjobs: 2 }),
      row({ device: 'nvme-dc', rw: 'randwrite', bs: 4096, iodepth: 1, numjobs: 2 }, 'clat_p50_us'),
      row({ device: 'nvme-dc', rw: 'randread', bs: 8192, iodepth: 1, numjobs: 1 }),
      row({ device: 'nvme-dc', rw: 'randread', bs: 4096, iodepth: 128, numjobs: 1 }),
      row({ device: 'consumer-ssd', rw: 'randread', bs: 4096, iodepth: 1, numjobs: 1 }),
    ];
    const jobs = measuredJobs(rows, 'nvme-dc');
    expect(jobs.map((j) => j.label)).toEqual(['randread 4 KiB, QD128 × 1 job', 'randread 8 KiB, QD1 × 1 job', 'randwrite 4 KiB, QD1 × 2 jobs']);
    expect(jobs[0]?.params).toEqual({ rw: 'randread', bs: '4096', iodepth: '128', numjobs: '1' });
    expect(measuredJobs(rows, 'hdd')).toEqual([]);
  });

  it('formats sizes', () => {
    expect(fmtBytes(512)).toBe('512 B');
    expect(fmtBytes(4096)).toBe('4 KiB');
    expect(fmtBytes(131072)).toBe('128 KiB');
    expect(fmtBytes(1 << 20)).toBe('1 MiB');
  });
});
