/*
 * urlState.ts - the view's state as a URL hash, so a link reproduces what
 * is on screen: which page, the experiment's parameters, the seed, the
 * before/after emphasis, the lesson and its step, and focus mode.
 *
 *   #/                                   home
 *   #/exp/fio?seed=1&p.rw=randwrite      an experiment (params prefixed "p.")
 *   #/lesson/ssd-4k-write?step=2         a lesson at step 2 (0-based)
 *   #/sandbox?s=mkdir+/d%0Async&at=1     the sandbox: its script (one command a
 *                                        line, format SANDBOX_VERSION), the command shown,
 *                                        cmp=1 both kernels, p.KEY its parameters
 *   ...&v.cursor=0.4&v.sweep=1           the view's own state (a cursor, a sweep run)
 *   ...&emph=after&focus=1&hc=1          emphasis, focus mode, high-contrast projector theme
 *
 * Pure: parseHash and formatHash are inverses on every Route they produce
 * (but for badSeed and badStep, which formatHash drops: the URL is then corrected).
 */

export type Emphasis = 'none' | 'before' | 'after';

export type Route =
  | { page: 'home' }
  /** badSeed: the link's seed when it was not one (shown, then dropped) */
  | { page: 'experiment'; name: string; params: Record<string, string>; seed: number; badSeed?: string; view?: Record<string, string> }
  /** badStep: the link's step when it was not one (shown, then dropped); step is then the nearest */
  | { page: 'lesson'; id: string; step: number; badStep?: string }
  /** script: the commands; at: the command shown (absent: the last) */
  | { page: 'sandbox'; script: string[]; at?: number; compare: boolean; params: Record<string, string> };

/** The sandbox link's format: a later language can read an older link. */
export const SANDBOX_VERSION = '1';

export interface ViewState {
  route: Route;
  emphasis: Emphasis;
  focus: boolean;
  /** the high-contrast projector theme (absent: off) */
  contrast?: boolean;
}

export const DEFAULT_SEED = 1;

export const defaultState = (): ViewState => ({ route: { page: 'home' }, emphasis: 'none', focus: false });

const isEmphasis = (s: string | null): s is Emphasis => s === 'none' || s === 'before' || s === 'after';

/** A path segment as typed; a malformed escape ("%E0%A4%A") stays as it is
 * (it then names no experiment) rather than throwing out of the router. */
function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The step a link's bad step text means, as near as it can: a number is
 * rounded into 0..MAX_STEP (the lesson then takes its last step for one
 * beyond its end), anything else is the first step. */
export const MAX_STEP = 9999;
function nearestStep(text: string | null): number {
  const x = text === null || text.trim() === '' ? NaN : Number(text);
  return Number.isFinite(x) ? Math.min(MAX_STEP, Math.max(0, Math.round(x))) : x === Infinity ? MAX_STEP : 0;
}

/** Parse a location hash ("#/exp/fio?seed=2") into a ViewState; unknown input gives home. */
export function parseHash(hash: string): ViewState {
  const st = defaultState();
  const raw = hash.startsWith('#') ? hash.slice(1) : hash;
  const q = raw.indexOf('?');
  const path = (q >= 0 ? raw.slice(0, q) : raw).split('/').filter((s) => s.length > 0).map(decodeSegment);
  const query = new URLSearchParams(q >= 0 ? raw.slice(q + 1) : '');
  const emph = query.get('emph');
  if (isEmphasis(emph)) st.emphasis = emph;
  st.focus = query.get('focus') === '1';
  if (query.get('hc') === '1') st.contrast = true;

  if (path[0] === 'exp' && path[1]) {
    const params: Record<string, string> = {};
    const view: Record<string, string> = {};
    for (const [k, v] of query) {
      if (k.startsWith('p.') && k.length > 2) params[k.slice(2)] = v;
      if (k.startsWith('v.') && k.length > 2) view[k.slice(2)] = v;
    }
    const seedText = query.get('seed');
    const ok = seedText !== null && /^\d{1,15}$/.test(seedText);
    st.route = { page: 'experiment', name: path[1], params, seed: ok ? Number(seedText) : DEFAULT_SEED };
    if (Object.keys(view).length > 0) st.route.view = view;
    if (seedText !== null && !ok) st.route.badSeed = seedText;
  } else if (path[0] === 'sandbox') {
    const s = query.get('s') ?? '';
    const script = s.split('\n').map((c) => c.trim()).filter((c) => c.length > 0);
    const atText = query.get('at');
    const params: Record<string, string> = {};
    for (const [k, v] of query) if (k.startsWith('p.') && k.length > 2) params[k.slice(2)] = v;
    st.route = { page: 'sandbox', script, compare: query.get('cmp') === '1', params };
    if (atText !== null && /^\d{1,4}$/.test(atText)) st.route.at = Number(atText);
  } else if (path[0] === 'lesson' && path[1]) {
    const stepText = query.get('step');
    const ok = stepText !== null && /^\d{1,4}$/.test(stepText);
    st.route = { page: 'lesson', id: path[1], step: ok ? Number(stepText) : nearestStep(stepText) };
    if (stepText !== null && !ok) st.route.badStep = stepText;
  }
  return st;
}

/** The canonical hash for a ViewState (params sorted, defaults omitted). */
export function formatHash(st: ViewState): string {
  const query = new URLSearchParams();
  let path = '/';
  const r = st.route;
  if (r.page === 'experiment') {
    path = `/exp/${encodeURIComponent(r.name)}`;
    if (r.seed !== DEFAULT_SEED) query.set('seed', String(r.seed));
    for (const k of Object.keys(r.params).sort()) query.set(`p.${k}`, r.params[k] ?? '');
    for (const k of Object.keys(r.view ?? {}).sort()) query.set(`v.${k}`, r.view?.[k] ?? '');
  } else if (r.page === 'sandbox') {
    path = '/sandbox';
    if (r.script.length) {
      query.set('sv', SANDBOX_VERSION);
      query.set('s', r.script.join('\n'));
    }
    if (r.at !== undefined) query.set('at', String(r.at));
    if (r.compare) query.set('cmp', '1');
    for (const k of Object.keys(r.params).sort()) query.set(`p.${k}`, r.params[k] ?? '');
  } else if (r.page === 'lesson') {
    path = `/lesson/${encodeURIComponent(r.id)}`;
    if (r.step !== 0) query.set('step', String(r.step));
  }
  if (st.emphasis !== 'none') query.set('emph', st.emphasis);
  if (st.focus) query.set('focus', '1');
  if (st.contrast) query.set('hc', '1');
  const qs = query.toString();
  return `#${path}${qs ? `?${qs}` : ''}`;
}
