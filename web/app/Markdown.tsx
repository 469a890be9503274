/* Markdown.tsx - render markdown-light blocks (see model/mdlight.ts) as React elements. */
import { parseMd, type Inline } from '../model/mdlight';

function Inl({ parts }: { parts: Inline[] }) {
  return (
    <>
      {parts.map((p, i) =>
        p.t === 'b' ? (
          <strong key={i}>{p.s}</strong>
        ) : p.t === 'code' ? (
          <code key={i}>{p.s}</code>
        ) : p.t === 'claim' ? (
          // a number about the run: the lesson test checks it against the run
          <span key={i} className="claim" data-claim={p.ref} title={`this run's ${p.ref}`}>
            {p.s}
          </span>
        ) : (
          <span key={i}>{p.s}</span>
        ),
      )}
    </>
  );
}

export function Markdown({ text, className }: { text: string; className?: string }) {
  return (
    <div className={className ?? 'md'}>
      {parseMd(text).map((b, i) =>
        b.type === 'p' ? (
          <p key={i}>
            <Inl parts={b.inl} />
          </p>
        ) : (
          <ul key={i}>
            {b.items.map((it, j) => (
              <li key={j}>
                <Inl parts={it} />
              </li>
            ))}
          </ul>
        ),
      )}
    </div>
  );
}
