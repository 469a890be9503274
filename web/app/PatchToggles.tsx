/*
 * PatchToggles.tsx - the experiment's patches as a row of switches above
 * the results (model/patches.ts): flipping one changes the after kernel's
 * switch parameter and runs again, so only the after picture moves. A
 * patch without a switch is a label, not a dead control: "in after" when
 * the before/after pair is its switch, "no effect" when it changes nothing
 * the model can see (a series' clean-up patch), with its title and diff.
 */
import type { PatchToggle } from '../model/patches';
import { KERNEL_TEXT } from '../views/common/palette';

interface Props {
  patch: string;
  toggles: PatchToggle[];
  disabled?: boolean;
  /** set a switch parameter to a value ("true" / "false", or an enum
   * switch's value) and run */
  onSet(param: string, value: string): void;
}

export function PatchToggles({ patch, toggles, disabled, onSet }: Props) {
  if (toggles.length === 0) return null;
  const switches = toggles.filter((t) => t.param);
  return (
    <section className="patch-toggles" aria-label={`the patches of ${patch}`} data-testid="patch-toggles">
      <div className="patch-toggles-head">
        <span className="patch-toggles-title">
          {switches.length > 0 ? (
            <>
              Patches in the <span style={{ color: KERNEL_TEXT.after }}>after</span> kernel
            </>
          ) : (
            <>
              The patch (<span style={{ color: KERNEL_TEXT.after }}>after</span> has it, <span style={{ color: KERNEL_TEXT.before }}>before</span> does not)
            </>
          )}
        </span>
        {switches.length > 1 && <span className="muted prose"> · switch one off to see what it alone does</span>}
      </div>
      <ul className="patch-list">
        {toggles.map((t) => (
          <li key={t.key} className={`patch${t.on ? ' patch-on' : ' patch-off'}`} data-testid={`patch-${t.param ?? t.key}`} data-on={t.on}>
            {t.param && t.choices ? (
              <span className={`switch-enum${t.on ? ' switch-enum-on' : ''}`} title={`${t.on ? 'applied' : 'not applied'} in the after kernel: ${t.param}=${t.value ?? ''}`}>
                <select
                  aria-label={`${t.param} in the after kernel (${t.title})`}
                  value={t.value}
                  disabled={disabled}
                  onChange={(e) => onSet(t.param!, e.target.value)}
                  data-testid={`switch-${t.param}-${t.key}`}
                >
                  {t.choices.map((c) => (
                    <option key={c} value={c}>
                      {t.param}={c}
                    </option>
                  ))}
                </select>
              </span>
            ) : t.param ? (
              <button
                type="button"
                role="switch"
                aria-checked={t.on}
                className="switch"
                disabled={disabled}
                title={`${t.on ? 'Switch off' : 'Switch on'} ${t.series ? `${t.series} ` : ''}in the after kernel (${t.param}), and run`}
                onClick={() => onSet(t.param!, t.on ? 'false' : 'true')}
                data-testid={`toggle-${t.param}`}
              >
                <span className="switch-knob" aria-hidden="true" />
                <span className="sr">{t.title}</span>
              </button>
            ) : t.fixed === 'none' ? (
              <span className="patch-badge patch-badge-none" title={t.help}>
                no effect
              </span>
            ) : (
              <span className="patch-badge" style={{ color: KERNEL_TEXT.after }} title="applied in the after kernel; the before kernel runs without it">
                in after
              </span>
            )}
            <span className="patch-text" title={t.help}>
              {t.series && <span className="patch-series">{t.series}</span>} {t.title}
            </span>
            {t.href && (
              <a className="patch-diff" href={t.href} title={t.hrefLabel} {...(t.href.startsWith('http') ? { target: '_blank', rel: 'noreferrer' } : {})}>
                diff
              </a>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
