/* HelpOverlay.tsx - the keyboard shortcuts, generated from the actions table. */
import { ACTIONS } from '../model/actions';

export function HelpOverlay({ onClose }: { onClose: () => void }) {
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
        <p className="muted">Shortcuts other than Esc are off while you type in a field.</p>
        <button type="button" className="btn" onClick={onClose} autoFocus>
          Close
        </button>
      </div>
    </div>
  );
}
