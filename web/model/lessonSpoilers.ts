/*
 * lessonSpoilers.ts - does a text give away the answer to a step's
 * prediction? A lesson shows its setting before the run and its figures
 * after; the lesson tests read what is on screen (or would be) before the
 * run and ask this module whether any number in it shows the run's value,
 * in any of the ways a page writes a number:
 *
 * - rounded as written: "744", "740", "0.74 s", "17,000", "1.5k" are each
 *   a rounding of 744.3 ms or 16,946 at the precision they show (the
 *   lesson claims' rule, model/lessonClaims.ts);
 * - in another unit of its family: a time in ms may be written in µs, s or
 *   min, a size in B, KiB, MiB or GiB;
 * - a number written with one significant digit ("700 ms", "5 calls")
 *   counts only when a unit of the value's family or the prediction's own
 *   unit follows it: "seed 1", "step 5" or "4 KiB" are not answers to
 *   "how many calls?";
 * - small counts in words ("five calls") with the prediction's unit after
 *   them.
 *
 * Pure: the Vitest lesson test runs it on the lesson's text, the Playwright
 * lesson spec on the page's visible text at every width and in focus mode.
 */

/** How many of a unit one unit of its family is, in the family's base (ns, bytes). */
const UNITS: Record<string, [family: string, scale: number]> = {
  ns: ['time', 1],
  us: ['time', 1e3],
  µs: ['time', 1e3],
  ms: ['time', 1e6],
  s: ['time', 1e9],
  min: ['time', 60e9],
  B: ['bytes', 1],
  KiB: ['bytes', 1024],
  MiB: ['bytes', 2 ** 20],
  GiB: ['bytes', 2 ** 30],
  '%': ['percent', 1],
};

const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty'];

/** The stem a noun unit is recognised by ("calls" -> "call"; "IO/s" also as "IOPS"). */
function unitStems(unit: string): string[] {
  const u = unit.toLowerCase();
  if (u === 'io/s') return ['io/s', 'iops'];
  return [u.replace(/e?s$/, '')];
}

export interface Spoiler {
  /** the number as the text writes it, with the word after it */
  shown: string;
  /** where in the text */
  at: number;
}

/**
 * The numbers in `text` that show `value` (a metric in `unit`, the
 * prediction's unit: "ms", "µs", "calls", "IO/s"...). Empty when the text
 * does not give the value away.
 */
export function spoilersIn(text: string, value: number, unit = ''): Spoiler[] {
  if (!Number.isFinite(value)) return [];
  const out: Spoiler[] = [];
  const fam = UNITS[unit]?.[0];
  const stems = unit && !fam ? unitStems(unit) : [];
  // a number: groups of three or plain digits, decimals, a k/M multiplier; then the next word
  const re = /(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:\s?([kKM])(?![\w]))?(?![\d])(?:[\s\u00a0\u202f]*(µs|us|ms|ns|min|s|KiB|MiB|GiB|B|%)(?![\w])|[\s\u00a0\u202f]+([A-Za-z][\w/]*))?/g;
  for (const m of text.matchAll(re)) {
    const whole = m[1]!.replace(/,/g, '');
    const dec = m[2] ?? '';
    const mult = m[3] === 'M' ? 1e6 : m[3] ? 1e3 : 1;
    const tokUnit = m[4];
    const word = m[5] ?? '';
    const shownValue = Number(`${whole}${dec ? `.${dec}` : ''}`) * mult;
    // its precision: the decimals shown, or a whole number's last non-zero digit
    let step = 10 ** -dec.length;
    if (!dec) {
      const zeros = /0*$/.exec(whole)![0].length;
      step = whole.length > 1 ? 10 ** Math.min(zeros, whole.length - 1) : 1;
    }
    step *= mult;
    // the value in the token's unit (a unit of another family: not this value)
    let v = value;
    if (tokUnit) {
      const to = UNITS[tokUnit];
      const from = UNITS[unit];
      if (to && from) {
        if (to[0] !== from[0]) continue;
        v = (value * from[1]) / to[1];
      } else if (to) continue; // "4 KiB" is no count of calls
    }
    const rounded = Math.round(v / step) * step;
    if (Math.abs(rounded - shownValue) >= step / 2 || rounded === 0) continue;
    // one significant digit: only with the value's unit after it
    const sig = Math.floor(Math.log10(Math.max(shownValue, step))) - Math.round(Math.log10(step)) + 1;
    if (sig <= 1) {
      const unitFollows = tokUnit ? !!fam : stems.some((st) => word.toLowerCase().startsWith(st));
      if (!unitFollows) continue;
    }
    out.push({ shown: m[0].trim(), at: m.index ?? 0 });
  }
  // small counts in words, with the unit after them: "five calls"
  const n = Math.round(value);
  if (stems.length > 0 && Math.abs(value - n) < 0.5 && n >= 1 && n < WORDS.length) {
    const wre = new RegExp(`\\b${WORDS[n]}\\s+(${stems.map((s) => s.replace(/[/]/g, '\\/')).join('|')})\\w*`, 'gi');
    for (const m of text.matchAll(wre)) out.push({ shown: m[0], at: m.index ?? 0 });
  }
  return out;
}

/** The numbers a verdict shows ("The simulation gives 744 ms, ..."): the value as the student reads it. */
export function verdictValue(verdict: string): number | null {
  const m = /gives (−)?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:×10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+))?/.exec(verdict);
  if (!m) return null;
  let v = Number(m[2]!.replace(/,/g, ''));
  if (m[3]) {
    const exp = Number([...m[3]].map((c) => '⁰¹²³⁴⁵⁶⁷⁸⁹'.indexOf(c) >= 0 ? String('⁰¹²³⁴⁵⁶⁷⁸⁹'.indexOf(c)) : c === '⁻' ? '-' : c).join(''));
    v *= 10 ** exp;
  }
  return m[1] ? -v : v;
}
