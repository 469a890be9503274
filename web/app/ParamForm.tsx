/*
 * ParamForm.tsx - the parameter form, generated from the experiment's
 * declared parameters: a select for enums and booleans, a text field for
 * numbers (so "inf" and partial input are possible), each with its unit,
 * its help line and, when invalid, a message saying what is allowed.
 */
import type { ParamInfo } from '../engine/types';

interface Props {
  params: ParamInfo[];
  values: Record<string, string>;
  errors: Record<string, string>;
  seed: number;
  onChange(name: string, text: string): void;
  onSeed(seed: number): void;
  onReset(): void;
  /** Drop a value the experiment has no parameter for (from an old link). */
  onRemove(name: string): void;
  disabled?: boolean;
}

function rangeText(p: ParamInfo): string {
  if (p.type === 'enum' || p.type === 'bool') return '';
  const lo = p.min !== undefined ? `${p.min_exclusive ? '>' : ''}${p.min}` : '';
  const hi = p.type === 'int-or-inf' ? 'inf' : p.max !== undefined ? String(p.max) : '';
  return lo || hi ? `${lo}…${hi}` : '';
}

export function ParamForm({ params, values, errors, seed, onChange, onSeed, onReset, onRemove, disabled }: Props) {
  // A link (or a stored form) may name a parameter this experiment does not
  // have (renamed since, or mistyped): there is no field to fix it in, so it
  // is shown here with a way out, not only as "Fix <name>" on a dead button.
  const unknown = Object.keys(values).filter((k) => !params.some((p) => p.name === k));
  return (
    <form className="params" data-testid="param-form" onSubmit={(e) => e.preventDefault()} aria-label="Parameters">
      {unknown.map((k) => (
        <div key={k} className="field field-bad" data-testid={`param-unknown-${k}`}>
          <div className="field-error" role="status">
            The link sets <code>{k}={values[k]}</code>, but this experiment has no parameter called <code>{k}</code>.{' '}
            <button type="button" className="btn-quiet" onClick={() => onRemove(k)} disabled={disabled} data-testid={`param-unknown-${k}-remove`}>
              Remove it
            </button>
          </div>
        </div>
      ))}
      {params.map((p) => {
        const id = `param-${p.name}`;
        const err = errors[p.name];
        const v = values[p.name] ?? '';
        return (
          <div key={p.name} className={`field${err ? ' field-bad' : ''}`}>
            <label htmlFor={id}>
              {p.name}
              {p.unit && <span className="unit"> ({p.unit})</span>}
            </label>
            {p.type === 'enum' || p.type === 'bool' ? (
              <select id={id} data-testid={id} value={v} disabled={disabled} onChange={(e) => onChange(p.name, e.target.value)}>
                {(p.type === 'bool' ? ['false', 'true'] : (p.values ?? [])).map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={id}
                data-testid={id}
                type="text"
                inputMode={p.type === 'float' ? 'decimal' : 'numeric'}
                spellCheck={false}
                autoComplete="off"
                value={v}
                disabled={disabled}
                placeholder={rangeText(p)}
                aria-invalid={!!err}
                aria-describedby={`${id}-help`}
                onChange={(e) => onChange(p.name, e.target.value)}
              />
            )}
            {err ? (
              <div className="field-error" id={`${id}-help`} data-testid={`${id}-error`} role="status">
                {err}
              </div>
            ) : (
              <div className="field-help" id={`${id}-help`}>
                {p.help}
                {rangeText(p) && <span className="muted"> [{rangeText(p)}]</span>}
              </div>
            )}
          </div>
        );
      })}
      <div className="field field-seed">
        <label htmlFor="param-seed">random seed</label>
        <input
          id="param-seed"
          data-testid="param-seed"
          type="number"
          min={0}
          step={1}
          value={seed}
          disabled={disabled}
          onChange={(e) => {
            const n = Math.floor(Number(e.target.value));
            if (Number.isFinite(n) && n >= 0 && n <= Number.MAX_SAFE_INTEGER) onSeed(n);
          }}
        />
        <div className="field-help">Same seed, same result.</div>
      </div>
      <button type="button" className="btn-quiet" onClick={onReset} disabled={disabled} data-testid="reset-params">
        Reset to the published setup
      </button>
    </form>
  );
}
