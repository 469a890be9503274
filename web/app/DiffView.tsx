/* DiffView.tsx - a unified diff excerpt with old/new line numbers, additions and removals marked by colour and sign. */
import { parseDiff } from '../model/diff';

export function DiffView({ title, text }: { title: string; text: string }) {
  const lines = parseDiff(text);
  return (
    <figure className="diff" data-testid="diff">
      <figcaption>{title}</figcaption>
      <div className="diff-body" role="table" aria-label={title}>
        {lines.map((l, i) => (
          <div key={i} className={`diff-line diff-${l.kind}`} role="row">
            <span className="diff-no" aria-hidden="true">{l.oldNo ?? ''}</span>
            <span className="diff-no" aria-hidden="true">{l.newNo ?? ''}</span>
            <span className="diff-sign" aria-hidden="true">{l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ' '}</span>
            <code className="diff-text">{l.text}</code>
          </div>
        ))}
      </div>
    </figure>
  );
}
