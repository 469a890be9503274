/*
 * format.ts - the lab's one number formatter. Panels, tables, chart labels,
 * lesson checks and lesson texts all print numbers through these functions,
 * so a value reads the same everywhere ("16,414", never "16410" in one place
 * and "16,414" in another). Rules (web/DESIGN.md):
 *   - 1000 and above: whole, with thousands separators ("16,414");
 *   - below 1000: 3 significant digits ("745", "18.3", "0.0954");
 *   - below 0.001: a power of ten ("9.5×10⁻⁶"), never "0.00000954";
 *   - zero is "0" whatever the unit (an axis's zero tick is "0", not "0 µs").
 * Axes print bare numbers and put the unit in the axis title, one unit per
 * axis (pickTimeUnit / pickByteUnit choose it from the axis's largest value).
 */

const SUPER: Record<string, string> = { '-': '⁻', '0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴', '5': '⁵', '6': '⁶', '7': '⁷', '8': '⁸', '9': '⁹' };

/** A number for people: see the rules above. */
export function fmtNum(x: number | undefined): string {
  if (x === undefined || Number.isNaN(x)) return '–';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '−∞';
  const a = Math.abs(x);
  const sign = x < 0 ? '−' : '';
  if (a >= 999.5) return sign + Math.round(a).toLocaleString('en-US');
  if (a === 0) return '0';
  if (a < 1e-3) {
    const [m, e] = a.toExponential(1).split('e');
    const exp = String(Number(e)).replace(/./g, (c) => SUPER[c] ?? c);
    return `${sign}${m}×10${exp}`;
  }
  return sign + String(Number(a.toPrecision(3)));
}

/** A metric unit for display: "us" -> "µs"; "count" is shown as nothing. */
export function fmtUnit(u: string | undefined): string {
  if (!u || u === 'count') return '';
  return u === 'us' ? 'µs' : u;
}

/** A value with its unit: "745 ms", "16,414", "80,100 IO/s". */
export function fmtQty(x: number | undefined, unit?: string): string {
  const u = fmtUnit(unit);
  const n = fmtNum(x);
  return u && x !== 0 && n !== '–' ? `${n} ${u}` : n;
}

/** Simulated nanoseconds as "812 µs", "3.41 ms", "12.3 s". */
export function fmtNs(ns: number): string {
  if (ns >= 1e9) return `${fmtNum(ns / 1e9)} s`;
  if (ns >= 1e6) return `${fmtNum(ns / 1e6)} ms`;
  if (ns >= 1e3) return `${fmtNum(ns / 1e3)} µs`;
  return `${fmtNum(ns)} ns`;
}

/** Milliseconds in the unit that reads best: "950 µs", "35.2 ms", "1.2 s"; 0 is "0". */
export function fmtMs(ms: number): string {
  return ms === 0 ? '0' : fmtNs(ms * 1e6);
}

/** Microseconds likewise: "9.8 µs", "1.7 ms". */
export function fmtUs(us: number): string {
  return us === 0 ? '0' : fmtNs(us * 1e3);
}

/** Bytes in binary units: "4 KiB", "128 MiB", "1.5 GiB", "512 B". */
export function fmtBytes(b: number): string {
  const u = pickByteUnit(b);
  return b === 0 ? '0' : `${fmtNum(b / u.per)} ${u.unit}`;
}

/** The unit an axis of times (given in ms) up to `maxMs` is drawn in, and
 * how many ms one of it is: µs below 1 ms, ms below 10 s, s above. */
export function pickTimeUnit(maxMs: number): { unit: 'µs' | 'ms' | 's'; per: number } {
  if (maxMs < 1) return { unit: 'µs', per: 1e-3 };
  if (maxMs < 10_000) return { unit: 'ms', per: 1 };
  return { unit: 's', per: 1000 };
}

/** The binary unit for a byte count up to `max` (B, KiB, MiB, GiB). */
export function pickByteUnit(max: number): { unit: 'B' | 'KiB' | 'MiB' | 'GiB'; per: number } {
  const a = Math.abs(max);
  if (a >= 2 ** 30) return { unit: 'GiB', per: 2 ** 30 };
  if (a >= 2 ** 20) return { unit: 'MiB', per: 2 ** 20 };
  if (a >= 2 ** 10) return { unit: 'KiB', per: 2 ** 10 };
  return { unit: 'B', per: 1 };
}

/** How `after` compares with `before`: "5.3× less", "1.2× more", "same";
 * within 10% as a percentage ("6% less"), where "1× less" would hide it. */
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

/** 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 22nd, 112th... */
export function fmtOrdinal(n: number): string {
  const m100 = n % 100;
  const suffix = m100 >= 11 && m100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
