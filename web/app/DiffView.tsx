/* DiffView.tsx - a unified diff excerpt with old/new line numbers,
 * additions and removals marked by colour and sign, its code lines wrapped
 * (never cut off); under a hunk's header, a note of what that hunk changes
 * in the picture. Hovering or focusing a note lights up those marks (the
 * page's elements whose data-hl-key names them) and brings the first into
 * view: in the lesson's picture column where it scrolls on its own, else
 * in the window, and then the light stays on (the note has moved away
 * from under the pointer) until another note, a click or Esc. */
import { Fragment, useEffect } from 'react';
import { parseDiff } from '../model/diff';
import { noteKeys, type HunkNote } from '../model/lessonFormat';
import { Markdown } from './Markdown';

/** The marks of these keys, in page order. */
export function marksOf(keys: string[]): Element[] {
  if (typeof document === 'undefined' || keys.length === 0) return [];
  return [...document.querySelectorAll(keys.map((k) => `[data-hl-key~="${k}"]`).join(', '))];
}

const drawn = (el: Element): boolean => {
  const r = el.getBoundingClientRect();
  return r.width > 0 || r.height > 0;
};

// the note whose marks are lit, and whether the light outlives the pointer
let lit: { keys: string[]; latched: boolean } | null = null;

function clear(): void {
  if (typeof document === 'undefined') return;
  for (const el of document.querySelectorAll('[data-hl-on]')) el.removeAttribute('data-hl-on');
  delete document.body.dataset.hl;
  lit = null;
}

/** Light up the marks of `keys` and bring the first drawn one into view. Returns how many there are. */
export function highlight(keys: string[]): number {
  clear();
  if (keys.length === 0) return 0;
  const marks = marksOf(keys);
  document.body.dataset.hl = keys.join(' ');
  for (const el of marks) el.setAttribute('data-hl-on', '');
  const first = marks.find(drawn);
  const y = window.scrollY;
  first?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  lit = { keys, latched: window.scrollY !== y };
  return marks.length;
}

/** The pointer or focus left a note: the light goes out unless bringing the marks into view moved the page. */
function release(): void {
  if (lit && !lit.latched) clear();
}

export function DiffView({ title, text, notes = [] }: { title: string; text: string; notes?: HunkNote[] }) {
  const lines = parseDiff(text);
  // a latched light goes out on a click elsewhere, Esc, or when the diff goes
  useEffect(() => {
    const off = (e: Event): void => {
      if (!lit?.latched) return;
      if (e instanceof KeyboardEvent && e.key !== 'Escape') return;
      if (e.target instanceof Element && e.target.closest('.diff-note')) return;
      clear();
    };
    document.addEventListener('mousedown', off);
    document.addEventListener('keydown', off);
    return () => {
      document.removeEventListener('mousedown', off);
      document.removeEventListener('keydown', off);
      clear();
    };
  }, []);
  let hunk = -1;
  // an excerpt without line numbers gives their columns to the code
  const numbered = lines.some((l) => l.oldNo !== undefined || l.newNo !== undefined);
  return (
    <figure className={`diff${numbered ? '' : ' diff-unnumbered'}`} data-testid="diff">
      <figcaption>{title}</figcaption>
      <div className="diff-body" role="table" aria-label={title}>
        {lines.map((l, i) => {
          if (l.kind === 'hunk') hunk++;
          const here = l.kind === 'hunk' ? notes.filter((n) => n.hunk === hunk) : [];
          return (
            <Fragment key={i}>
              <div className={`diff-line diff-${l.kind}`} role="row">
                <span className="diff-no" role="cell" aria-label={l.oldNo ? `old line ${l.oldNo}` : 'no old line'}>{l.oldNo ?? ''}</span>
                <span className="diff-no" role="cell" aria-label={l.newNo ? `new line ${l.newNo}` : 'no new line'}>{l.newNo ?? ''}</span>
                <span className="diff-sign" role="cell" aria-label={l.kind === 'add' ? 'added' : l.kind === 'del' ? 'removed' : 'unchanged'}>{l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ' '}</span>
                <code className="diff-text" role="cell">{l.text}</code>
              </div>
              {here.map((n, k) => {
                const keys = noteKeys(n);
                return (
                  <div
                    key={`n${k}`}
                    className={`diff-note${keys.length ? ' diff-note-marks' : ''}`}
                    role="row"
                    tabIndex={0}
                    data-testid="diff-note"
                    data-hunk={n.hunk}
                    data-picture={keys.join(' ') || undefined}
                    title={keys.length ? 'Hover or focus to light up what this hunk changes in the picture' : undefined}
                    onMouseEnter={() => keys.length && highlight(keys)}
                    onMouseLeave={release}
                    onFocus={() => keys.length && highlight(keys)}
                    onBlur={release}
                  >
                    <span role="cell" className="diff-note-text">
                      <span className="diff-note-mark" aria-hidden="true">
                        {keys.length ? '◉ ' : '▸ '}
                      </span>
                      <Markdown text={n.text} className="md-inline" />
                    </span>
                  </div>
                );
              })}
            </Fragment>
          );
        })}
      </div>
    </figure>
  );
}
