/*
 * fioJobs.ts - the fio jobs that were measured on a device profile, read
 * from the fio experiment's published rows (one row per measured metric),
 * so the device view can offer "jump to a measured job" and the model can
 * be compared with the drive point by point. Pure.
 */
import type { PublishedRow } from '../engine/types';
import { fmtBytes } from './format';

export interface MeasuredJob {
  rw: string;
  bs: number;
  iodepth: number;
  numjobs: number;
  source: string;
  /** "randwrite 4 KiB, QD1 x 1 job" */
  label: string;
  /** Parameter text for the form. */
  params: Record<string, string>;
}

const RW_ORDER = ['randread', 'randwrite', 'read', 'write'];

/** "4 KiB", "128 KiB", "512 B", "1 MiB": the one formatter's. */
export { fmtBytes };

type Shape = { rw: string; bs: number; iodepth: number; numjobs: number };

/** A fio job's identity ("randread/4096/1/1"); parameter text works as well as numbers. */
export const jobKey = (p: { [K in keyof Shape]: string | number }): string => `${p.rw}/${p.bs}/${p.iodepth}/${p.numjobs}`;

/** "randwrite 4 KiB, QD1 × 1 job" */
export const jobLabel = (p: Shape): string => `${p.rw} ${fmtBytes(p.bs)}, QD${p.iodepth} × ${p.numjobs} job${p.numjobs === 1 ? '' : 's'}`;

/** The distinct measured jobs for `device`, ordered by rw, bs, iodepth, numjobs. */
export function measuredJobs(rows: PublishedRow[], device: string): MeasuredJob[] {
  const seen = new Map<string, MeasuredJob>();
  for (const r of rows) {
    const p = r.params;
    if (p.device !== device) continue;
    const rw = String(p.rw ?? '');
    const bs = Number(p.bs);
    const iodepth = Number(p.iodepth ?? 1);
    const numjobs = Number(p.numjobs ?? 1);
    if (!rw || !Number.isFinite(bs) || !Number.isFinite(iodepth) || !Number.isFinite(numjobs)) continue;
    const key = jobKey({ rw, bs, iodepth, numjobs });
    if (seen.has(key)) continue;
    seen.set(key, {
      rw,
      bs,
      iodepth,
      numjobs,
      source: r.source,
      label: jobLabel({ rw, bs, iodepth, numjobs }),
      params: { rw, bs: String(bs), iodepth: String(iodepth), numjobs: String(numjobs) },
    });
  }
  const rank = (rw: string): number => (RW_ORDER.indexOf(rw) + 1 || 99);
  return [...seen.values()].sort((a, b) => rank(a.rw) - rank(b.rw) || a.bs - b.bs || a.iodepth - b.iodepth || a.numjobs - b.numjobs);
}
