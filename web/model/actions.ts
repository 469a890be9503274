/*
 * actions.ts - every keyboard-reachable action in one table (cf. Excalidraw's
 * actions): its label, the keys shown for it, the test that recognises its
 * key event, and what it performs. The shortcut handler and the "?" help
 * overlay are both derived from this table, so they cannot disagree.
 */

/** What an action can do; the app supplies these (no-ops where not applicable). */
export interface ActionContext {
  run(): void;
  cancel(): void;
  /** Leave the text field that has focus (Esc in a field). */
  leaveField(): void;
  /** A digit typed outside a field: into the lesson step's prediction field; false when there is none. */
  typeGuess(key: string): boolean;
  next(): void;
  prev(): void;
  cycleEmphasis(): void;
  toggleFocus(): void;
  toggleContrast(): void;
  toggleHelp(): void;
  /** Close the help overlay if open; true if it was. */
  closeOverlay(): boolean;
  /** An arrow key: steps a replay that is open (by event, or with shift by
   * operation); otherwise → / ← are next / previous. */
  arrow(dir: 1 | -1, shift: boolean): void;
  /** Space: play or pause a replay that is open; false when there is none
   * (the key then keeps its usual meaning). */
  playPause(): boolean;
}

/** The parts of a KeyboardEvent the tests look at. */
export interface KeyLike {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  shiftKey?: boolean;
}

export interface Action {
  id: string;
  label: string;
  keys: string[];
  /** Applies even while typing in a form field (only Escape does). */
  inFields?: boolean;
  /** Applies in a field that hands these keys to the page (a lesson's
   * prediction field once its step has run, or while it is empty:
   * data-step-keys="on"), for the keys this test accepts. */
  inStepField?: (e: KeyLike) => boolean;
  /** Applies also in a prediction field that holds nothing to edit: empty,
   * or the guess its run judged, untouched since (data-step-keys="all"), so
   * the projector's keys work right after Enter ran the step. Only for keys
   * no guess is typed with (not e: 2e3). */
  inIdleField?: boolean;
  test(e: KeyLike): boolean;
  /** false: not handled after all (the key keeps its default) */
  perform(ctx: ActionContext, e: KeyLike): void | boolean;
}

const plain = (e: KeyLike): boolean => !e.ctrlKey && !e.metaKey && !e.altKey;
const key = (...ks: string[]) => (e: KeyLike): boolean => plain(e) && ks.includes(e.key);

export const ACTIONS: readonly Action[] = [
  { id: 'run', label: 'Run the experiment (or this lesson step)', keys: ['r'], test: key('r', 'R'), perform: (c) => c.run() },
  {
    id: 'cancel',
    label: 'Leave the field you are typing in / cancel the run / close this help',
    keys: ['Esc'],
    inFields: true,
    test: key('Escape'),
    perform: (c) => {
      if (c.closeOverlay()) return;
      c.leaveField();
      c.cancel();
    },
  },
  {
    id: 'guess',
    label: 'A lesson step: type your guess (a digit goes to the prediction field), then Enter runs the step',
    keys: ['0–9', 'Enter'],
    test: (e) => plain(e) && /^[0-9]$/.test(e.key),
    perform: (c, e) => c.typeGuess(e.key),
  },
  {
    id: 'next',
    label: 'Next lesson step (also from the prediction field once the step has run); on an experiment page, its next setup (published setup, threshold, or measured job). While a replay is open, → steps it instead (n still steps the setups)',
    keys: ['→', 'n'],
    inStepField: key('ArrowRight'),
    test: key('ArrowRight', 'n', 'N'),
    perform: (c, e) => (e.key === 'ArrowRight' ? c.arrow(1, !!e.shiftKey) : c.next()),
  },
  {
    id: 'prev',
    label: 'Previous lesson step; on an experiment page, its previous setup. While a replay is open, ← steps it back (p still steps the setups)',
    keys: ['←', 'p'],
    inStepField: key('ArrowLeft'),
    test: key('ArrowLeft', 'p', 'P'),
    perform: (c, e) => (e.key === 'ArrowLeft' ? c.arrow(-1, !!e.shiftKey) : c.prev()),
  },
  { id: 'replay-op', label: 'Replay: next / previous operation (an lseek, a drop step, a torture operation)', keys: ['⇧→', '⇧←'], test: () => false, perform: () => undefined },
  { id: 'replay-play', label: 'Replay: play / pause', keys: ['Space'], test: key(' '), perform: (c) => c.playPause() },
  { id: 'emphasis', label: 'Emphasise before, then after, then neither', keys: ['e'], test: key('e', 'E'), perform: (c) => c.cycleEmphasis() },
  { id: 'focus', label: 'Focus mode for projectors: one large before/after pair, chart text from 24 px, no prose', keys: ['f'], inIdleField: true, test: key('f', 'F'), perform: (c) => c.toggleFocus() },
  { id: 'contrast', label: 'High-contrast projector theme (black text, thicker lines, larger chart text)', keys: ['c'], inIdleField: true, test: key('c', 'C'), perform: (c) => c.toggleContrast() },
  { id: 'help', label: 'Show or hide this help', keys: ['?'], inIdleField: true, test: (e) => !e.ctrlKey && !e.metaKey && e.key === '?', perform: (c) => c.toggleHelp() },
];

/** Where a key event comes from: the page, a text field, a field that hands ← / → to the page, or
 * one that also hands it the projector's keys (a prediction field with nothing to edit). */
export type KeyPlace = 'page' | 'field' | 'step-field' | 'idle-field';

/**
 * The action a key event triggers, or null. In a text field only actions
 * marked inFields apply; in a step field also those whose inStepField
 * accepts the key. (A boolean `where` is the old form: true = a field.)
 */
export function actionFor(e: KeyLike, where: KeyPlace | boolean, actions: readonly Action[] = ACTIONS): Action | null {
  const place: KeyPlace = where === true ? 'field' : where === false ? 'page' : where;
  for (const a of actions) {
    const applies =
      place === 'page' || a.inFields || ((place === 'step-field' || place === 'idle-field') && !!a.inStepField?.(e)) || (place === 'idle-field' && !!a.inIdleField);
    if (applies && a.test(e)) return a;
  }
  return null;
}
