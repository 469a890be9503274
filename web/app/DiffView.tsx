/* DiffView.tsx - a unified diff excerpt with old/new line numbers, additions and removals marked by colour and sign. */
import { parseDiff } from '../model/diff';

export function DiffView({ title, text }: { title: string; text: string }) {
  const lines = parseDiff(text);
  return (
    <figure className="diff" data-testid="diff">
      <figcaption>{title}</figcaption>
      {/* a region of its own that scrolls sideways, so it takes keyboard focus */}
      <div className="diff-body" role="table" aria-label={title} tabIndex={0}>
        {lines.map((l, i) => (
          <div key={i} className={`diff-line diff-${l.kind}`} role="row">
            <span className="diff-no" role="cell" aria-label={l.oldNo ? `old line ${l.oldNo}` : 'no old line'}>{l.oldNo ?? ''}</span>
            <span className="diff-no" role="cell" aria-label={l.newNo ? `new line ${l.newNo}` : 'no new line'}>{l.newNo ?? ''}</span>
            <span className="diff-sign" role="cell" aria-label={l.kind === 'add' ? 'added' : l.kind === 'del' ? 'removed' : 'unchanged'}>{l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ' '}</span>
            <code className="diff-text" role="cell">{l.text}</code>
          </div>
        ))}
      </div>
    </figure>
  );
}
