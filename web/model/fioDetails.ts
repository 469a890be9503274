/*
 * fioDetails.ts - read the fio experiment's `details` (engine/src/exp/exp_fio.c,
 * fio_details) into what the device view draws:
 *
 *   {"profile": "nvme-dc", "title": "...", "notes": "...",
 *    "cdf": [[p, us], ...101 quantiles...],
 *    "device": {"reads", "writes", "busy_ns", "max_inflight"},
 *    "measured": null | {"iops", "bw_mib_s",
 *                        "clat_us": {"avg", "p50", "p90", "p99", "p999"},
 *                        "fitted": bool, "why": "...", "source": "file"},
 *    "measured_also": [the same job's other measured runs, same form]}
 *
 * `measured.fitted` says whether the model was fitted to that very point
 * (so agreement is expected); if not, `why` says whether it was held out
 * (agreement is a prediction) or is outside the model (with the reason,
 * e.g. a run in another drive state). Every field is checked; anything
 * missing is not drawn.
 */
import type { MeasuredMarker, Quantile } from './cdf';
import { fmtNs, fmtNum } from './format';

export interface MeasuredPoint {
  source: string;
  /** true: the profile was fitted to this point; false: held out or outside the model. */
  usedForFit: boolean;
  /** Why a point was not fitted: 'held out' (a prediction) or 'outside the model', with the reason. */
  notFitted?: { kind: 'held out' | 'outside the model'; reason: string };
  markers: MeasuredMarker[];
  iops?: number;
  bwMibS?: number;
  clatAvgUs?: number;
}

export interface FioPicture {
  profile: string;
  title: string;
  notes: string;
  simulated: Quantile[];
  measured: MeasuredPoint | null;
  /** the same job measured in other runs (a replicate, another drive state) */
  others: MeasuredPoint[];
  device: Record<string, number>;
}

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const num = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
const str = (x: unknown): string => (typeof x === 'string' ? x : '');

/** "p99.9" for 0.999, "p50" for 0.5. */
export function pLabel(p: number): string {
  return `p${Number((p * 100).toPrecision(6))}`;
}

/** The probability a fio-style key names: "p50" -> 0.5, "p999" -> 0.999, "p9999" -> 0.9999. */
export function keyProb(k: string): number | undefined {
  const m = /^p(\d+)$/.exec(k);
  if (!m) return undefined;
  const d = m[1]!;
  const pct = d.length <= 2 ? Number(d) : Number(`${d.slice(0, 2)}.${d.slice(2)}`);
  return pct > 0 && pct < 100 ? pct / 100 : undefined;
}

/** Quantiles from [[p, us], ...] (p in [0,1]), sorted by p; malformed entries are skipped. */
export function readQuantiles(x: unknown): Quantile[] {
  if (!Array.isArray(x)) return [];
  const out: Quantile[] = [];
  for (const e of x) {
    if (!Array.isArray(e)) continue;
    const p = num(e[0]);
    const us = num(e[1]);
    if (p !== undefined && us !== undefined && p >= 0 && p <= 1) out.push({ p, us });
  }
  return out.sort((a, b) => a.p - b.p);
}

/** "outside the model: a stall" -> its kind and reason; anything else counts as held out. */
export function readWhy(why: string): { kind: 'held out' | 'outside the model'; reason: string } {
  const m = /^(held out|outside the model):\s*(.*)$/.exec(why);
  if (m) return { kind: m[1] as 'held out' | 'outside the model', reason: m[2]! };
  return { kind: 'held out', reason: why };
}

/** The measured fio point, or null. */
export function readMeasured(x: unknown): MeasuredPoint | null {
  if (!isObj(x)) return null;
  const clat = isObj(x.clat_us) ? x.clat_us : {};
  const markers: MeasuredMarker[] = [];
  for (const [k, v] of Object.entries(clat)) {
    const p = keyProb(k);
    const us = num(v);
    if (p !== undefined && us !== undefined) markers.push({ p, us, label: pLabel(p) });
  }
  markers.sort((a, b) => a.p - b.p);
  return {
    source: str(x.source) || 'calibration data',
    usedForFit: x.fitted === true,
    notFitted: x.fitted === true ? undefined : readWhy(str(x.why)),
    markers,
    iops: num(x.iops),
    bwMibS: num(x.bw_mib_s),
    clatAvgUs: num(clat.avg),
  };
}

/** The device view's picture from a fio run's details. */
export function readFioDetails(details: Record<string, unknown>): FioPicture {
  const device: Record<string, number> = {};
  if (isObj(details.device)) for (const [k, v] of Object.entries(details.device)) if (num(v) !== undefined) device[k] = v as number;
  return {
    profile: str(details.profile),
    title: str(details.title),
    notes: str(details.notes),
    simulated: readQuantiles(details.cdf),
    measured: readMeasured(details.measured),
    others: Array.isArray(details.measured_also)
      ? details.measured_also.map(readMeasured).filter((m): m is MeasuredPoint => m !== null)
      : [],
    device,
  };
}

/**
 * The device's counters of a run in words a student reads: "200,002" reads,
 * "busy 15.7 s of the 15.7 s run (100%)", "at most 1 request in flight"
 * (not `busy_ns 15,728,142,495`). Unknown counters keep their name.
 */
export function deviceCounters(device: Record<string, number>, simNs: number): { key: string; label: string; value: string }[] {
  const out: { key: string; label: string; value: string }[] = [];
  const { reads, writes, busy_ns: busy, max_inflight: inflight, ...rest } = device;
  if (reads !== undefined) out.push({ key: 'reads', label: 'reads served', value: fmtNum(reads) });
  if (writes !== undefined) out.push({ key: 'writes', label: 'writes served', value: fmtNum(writes) });
  if (busy !== undefined)
    out.push({
      key: 'busy_ns',
      label: 'busy (a request in service)',
      value: simNs > 0 ? `${fmtNs(busy)} of the ${fmtNs(simNs)} run (${fmtNum((100 * busy) / simNs)}%)` : fmtNs(busy),
    });
  if (inflight !== undefined) out.push({ key: 'max_inflight', label: 'most requests in flight at once', value: fmtNum(inflight) });
  for (const [k, v] of Object.entries(rest)) out.push({ key: k, label: k.replace(/_/g, ' '), value: fmtNum(v) });
  return out;
}
