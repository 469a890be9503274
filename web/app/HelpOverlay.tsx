/* HelpOverlay.tsx - the keyboard shortcuts, generated from the actions table, and the lessons the header's bar names. */
import { ACTIONS } from '../model/actions';
import type { Lesson } from '../model/lessonFormat';

export function HelpOverlay({ onClose, lessons = [] }: { onClose: () => void; lessons?: Lesson[] }) {
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-labelledby="help-title" data-testid="help" onClick={onClose}>
      <div className="overlay-card" onClick={(e) => e.stopPropagation()}>
        <h2 id="help-title">Keyboard</h2>
        <table className="keys">
          <tbody>
            {ACTIONS.map((a) => (
              <tr key={a.id}>
                <td>
                  {a.keys.map((k, i) => (
                    <span key={k}>
                      {i > 0 && ' or '}
                      <kbd>{k}</kbd>
                    </span>
                  ))}
                </td>
                <td>{a.label}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p className="muted">Shortcuts other than Esc are off while you type in a field; a lesson&apos;s prediction field hands ← and → on once its step has run.</p>
        {lessons.length > 0 && (
          <>
            <h3 className="keys-lessons-title">Lessons</h3>
            <table className="keys keys-lessons" data-testid="help-lessons">
              <tbody>
                {lessons.map((l) => (
                  <tr key={l.id}>
                    <td>
                      <a href={`#/lesson/${l.id}`} onClick={onClose}>
                        {l.short}
                      </a>
                    </td>
                    <td>
                      {l.title}
                      {l.seed !== '-' ? <span className="muted"> (patch {l.seed})</span> : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
        <button type="button" className="btn" onClick={onClose} autoFocus>
          Close
        </button>
      </div>
    </div>
  );
}
