/*
 * format.ts - numbers for people: significant digits without noise, thousands
 * separators, durations from nanoseconds, and the before/after change.
 */

/** 3 significant digits below 1000, whole numbers with separators above. */
export function fmtNum(x: number | undefined): string {
  if (x === undefined || Number.isNaN(x)) return '–';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '−∞';
  const a = Math.abs(x);
  if (a >= 1000) return Math.round(x).toLocaleString('en-US');
  if (a === 0) return '0';
  return String(Number(x.toPrecision(3)));
}

/** Simulated nanoseconds as "812 µs", "3.41 ms", "12.3 s". */
export function fmtNs(ns: number): string {
  if (ns >= 1e9) return `${fmtNum(ns / 1e9)} s`;
  if (ns >= 1e6) return `${fmtNum(ns / 1e6)} ms`;
  if (ns >= 1e3) return `${fmtNum(ns / 1e3)} µs`;
  return `${fmtNum(ns)} ns`;
}

/** How `after` compares with `before`: "5.3× less", "1.2× more", "same";
 * within 10% as a percentage ("0.05% less"), where "1× less" would hide it. */
export function fmtChange(before: number | undefined, after: number | undefined): string {
  if (before === undefined || after === undefined || !Number.isFinite(before) || !Number.isFinite(after)) return '–';
  if (before === after) return 'same';
  if (before === 0 || after === 0) return after > before ? 'up from 0' : 'down to 0';
  const r = after / before;
  if (r > 1 / 1.1 && r < 1.1) return `${Number((Math.abs(r - 1) * 100).toPrecision(2))}% ${r > 1 ? 'more' : 'less'}`;
  return r > 1 ? `${fmtNum(r)}× more` : `${fmtNum(1 / r)}× less`;
}

/** Signed percentage "+12%" / "−3.4%". */
export function fmtPct(x: number): string {
  const v = Number((x * 100).toPrecision(2));
  return `${v > 0 ? '+' : v < 0 ? '−' : '±'}${Math.abs(v)}%`;
}

/** A metric unit for display: "us" -> "µs"; "count" is shown as nothing. */
export function fmtUnit(u: string | undefined): string {
  if (!u || u === 'count') return '';
  return u === 'us' ? 'µs' : u;
}

/** 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 22nd, 112th... */
export function fmtOrdinal(n: number): string {
  const m100 = n % 100;
  const suffix = m100 >= 11 && m100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
