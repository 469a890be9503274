/* DiffView.tsx - a unified diff excerpt with old/new line numbers,
 * additions and removals marked by colour and sign; under a hunk's header,
 * a note of what that hunk changes in the picture (hovering or focusing
 * it lights up those marks: the page's elements with its data-hl-key). */
import { Fragment } from 'react';
import { parseDiff } from '../model/diff';
import type { HunkNote } from '../model/lessonFormat';
import { Markdown } from './Markdown';

/** Light up the picture's marks of `key` (index.css: body[data-hl]). */
function highlight(key: string | undefined): void {
  if (typeof document === 'undefined') return;
  if (key) document.body.dataset.hl = key;
  else delete document.body.dataset.hl;
}

export function DiffView({ title, text, notes = [] }: { title: string; text: string; notes?: HunkNote[] }) {
  const lines = parseDiff(text);
  let hunk = -1;
  return (
    <figure className="diff" data-testid="diff">
      <figcaption>{title}</figcaption>
      {/* a region of its own that scrolls sideways, so it takes keyboard focus */}
      <div className="diff-body" role="table" aria-label={title} tabIndex={0}>
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
              {here.map((n, k) => (
                <div
                  key={`n${k}`}
                  className="diff-note"
                  role="row"
                  tabIndex={0}
                  data-testid="diff-note"
                  data-picture={n.picture}
                  onMouseEnter={() => highlight(n.picture)}
                  onMouseLeave={() => highlight(undefined)}
                  onFocus={() => highlight(n.picture)}
                  onBlur={() => highlight(undefined)}
                >
                  <span role="cell" className="diff-note-text">
                    <span className="diff-note-mark" aria-hidden="true">
                      ▸{' '}
                    </span>
                    <Markdown text={n.text} className="md-inline" />
                  </span>
                </div>
              ))}
            </Fragment>
          );
        })}
      </div>
    </figure>
  );
}
