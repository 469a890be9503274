/*
 * ExperimentPage.tsx - one experiment: its parameter form (state in the
 * URL and in localStorage), Run / Cancel with progress, and the results of
 * the before and after runs (or the single base run) side by side.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import type { ExperimentInfo, RunSpec } from '../engine/types';
import { defaultParams, nonDefault, stepParams, validateAll, withDefaults } from '../model/params';
import type { Emphasis } from '../model/urlState';
import type { Lesson } from '../model/lessonFormat';
import { patchToggles } from '../model/patches';
import { useWindowWidth } from '../views/common/theme';
import { PatchToggles } from './PatchToggles';
import { usePageCommands } from './commands';
import { ErrorBanner } from './ErrorBanner';
import { ParamForm } from './ParamForm';
import { collectFor, replayFor, stepsFor } from '../views/registry';
import { ReplaySection } from '../views/replay/ReplaySection';
import { Results } from './Results';
import { RunBar } from './RunBar';
import { saveJson } from './storage';
import { specKey, useRunner, type RunnerState } from './useRunner';
import { diffLabel } from '../model/runDiff';
import type { PreviousRun } from '../views/types';

interface Props {
  info: ExperimentInfo;
  params: Record<string, string>;
  seed: number;
  /** The link's seed, when it was not a seed (seed 1 is used instead). */
  badSeed?: string;
  emphasis: Emphasis;
  /** The view's own state from the URL (v.* keys: a cursor, a sweep run). */
  view: Record<string, string>;
  /** the lessons, for a patch's diff shown in one */
  lessons?: Lesson[];
  /** Changes with every navigation from outside the page: run what the URL now says. */
  navKey: number;
  /** Replace the URL's parameters and seed (what the user typed is never dropped). */
  onChange(params: Record<string, string>, seed: number): void;
  onView(patch: Record<string, string | undefined>): void;
}

export function ExperimentPage({ info, params, seed, badSeed, emphasis, view, lessons, navKey, onChange, onView }: Props) {
  const values = useMemo(() => withDefaults(info.params, params), [info, params]);
  const errors = useMemo(() => validateAll(info.params, values), [info, values]);
  const invalid = Object.keys(errors).length > 0;
  const specs: RunSpec[] = useMemo(
    () => info.variants.map((variant) => ({ experiment: info.name, variant, params: values, seed })),
    [info, values, seed],
  );
  const runner = useRunner();
  // below 1200 px the form is one column with the results, folded (the
  // comparison must not start a screen down); it opens by itself on an error
  const wide = useWindowWidth() >= 1200;
  const [openNarrow, setOpenNarrow] = useState(false);
  const changed = Object.keys(nonDefault(info.params, values)).length + (seed !== 1 ? 1 : 0);
  const { state } = runner;
  const replaySpec = replayFor(info.name);
  const stale = state.key !== null && state.key !== specKey(specs);

  useEffect(() => saveJson(`form:${info.name}`, nonDefault(info.params, values)), [info, values]);

  // Opening a page (or a shared link) runs it once, so the link shows its
  // result; unless the user already started a run on it (a click or key
  // can land before this effect fires), which it must not cancel.
  const autoRan = useRef<string | null>(null);
  const userRan = useRef<string | null>(null);
  useEffect(() => {
    if (autoRan.current === info.name || invalid) return;
    autoRan.current = info.name;
    if (userRan.current === info.name) return;
    void runner.run(specs, collectFor(info.name));
  }, [info.name, invalid, specs, runner]);

  // A link with other parameters opened on this page (or back / forward):
  // run what it says, as opening it fresh would.
  const ranNav = useRef(navKey);
  useEffect(() => {
    if (ranNav.current === navKey) return;
    ranNav.current = navKey;
    if (invalid || state.key === specKey(specs)) return;
    userRan.current = info.name;
    void runner.run(specs, collectFor(info.name));
  }, [navKey, invalid, specs, runner, info.name, state.key]);

  // The last two finished runs: the one before the current is shown as a ghost.
  const [history, setHistory] = useState<{ key: string; params: Record<string, string>; seed: number; runs: RunnerState['results'] }[]>([]);
  useEffect(() => {
    const { status, key, specs: done, results } = state;
    if (status !== 'done' || !key || !done?.[0]) return;
    const entry = { key, params: done[0].params, seed: done[0].seed, runs: results };
    setHistory((h) => (h.at(-1)?.key === key ? h : [...h.slice(-1), entry]));
  }, [state]);
  const prevEntry = history.filter((e) => e.key !== state.key).at(-1);
  // while a run is under way the last finished one stays on screen, dimmed
  // (the panels used to say "Not run yet" during every run)
  const running = state.status === 'running';
  const shownRuns = running && Object.keys(state.results).length === 0 ? (history.at(-1)?.runs ?? {}) : state.results;
  const previous: PreviousRun | undefined = prevEntry && {
    label: diffLabel(prevEntry.params, state.specs?.[0]?.params ?? values, prevEntry.seed, state.specs?.[0]?.seed ?? seed),
    params: prevEntry.params,
    runs: prevEntry.runs,
  };

  const run = (): void => {
    if (invalid) return;
    userRan.current = info.name;
    void runner.run(specs, collectFor(info.name));
  };

  /** A view asked for other parameters: show them in the form and URL, and run them. */
  const runWith = (p: Record<string, string>): void => {
    const next = { ...values, ...p };
    onChange(nonDefault(info.params, next), seed);
    if (Object.keys(validateAll(info.params, next)).length > 0) return;
    userRan.current = info.name;
    void runner.run(
      info.variants.map((variant) => ({ experiment: info.name, variant, params: next, seed })),
      collectFor(info.name),
    );
  };
  // The keyboard's next / previous walk the experiment's steps (its
  // published setups; the device page: the measured jobs), each one shown
  // and run.
  const steps = useMemo(() => stepsFor(info, values), [info, values]);
  const step = (dir: 1 | -1) => (): void => {
    const p = stepParams(steps, values, dir);
    if (p) runWith(p);
  };
  usePageCommands({ run, cancel: runner.cancel, ...(steps.length > 0 ? { next: step(1), prev: step(-1) } : {}) });

  return (
    <div className="exp-page" data-testid={`exp-${info.name}`}>
      <aside className="sidebar chrome">
        <details
          className="params-box"
          open={wide || openNarrow || invalid}
          onToggle={(e) => {
            if (!wide) setOpenNarrow(e.currentTarget.open);
          }}
        >
          <summary className="sidebar-title" data-testid="params-summary">
            Parameters{changed > 0 ? ` (${changed} changed)` : ''}
          </summary>
        <ParamForm
          params={info.params}
          values={values}
          errors={errors}
          seed={seed}
          onChange={(name, text) => onChange(nonDefault(info.params, { ...values, [name]: text }), seed)}
          onSeed={(s) => onChange(nonDefault(info.params, values), s)}
          onReset={() => onChange(nonDefault(info.params, defaultParams(info.params)), 1)}
          onRemove={(name) => onChange(nonDefault(info.params, Object.fromEntries(Object.entries(values).filter(([k]) => k !== name))), seed)}
        />
        </details>
      </aside>
      <section className="main-col">
        <header className="exp-head">
          <div className="exp-kicker">{info.seed !== '-' ? `patch ${info.seed}` : 'substrate'}</div>
          <h1>{info.title}</h1>
        </header>
        <RunBar
          status={state.status}
          progress={state.progress}
          current={state.current}
          invalid={invalid}
          badParams={Object.keys(errors)}
          stale={stale}
          onRun={run}
          onCancel={runner.cancel}
        />
        <PatchToggles patch={`patch ${info.seed}`} toggles={patchToggles(info, values, lessons)} onToggle={(param, on) => runWith({ [param]: on ? 'true' : 'false' })} />
        {badSeed !== undefined && (
          <p className="notice" role="status" data-testid="bad-seed">
            The link&apos;s random seed <code>{badSeed}</code> is not a whole number from 0 to 999,999,999,999,999, so random seed {seed} is used.
          </p>
        )}
        {state.error && <ErrorBanner error={state.error} />}
        <Results
          info={info}
          params={values}
          variants={info.variants}
          runs={shownRuns}
          running={running}
          emphasis={emphasis}
          stale={stale || running}
          previous={previous}
          seed={state.specs?.[0]?.seed ?? seed}
          onParams={runWith}
          view={view}
          onView={onView}
        />
        {replaySpec && !invalid && (
          <ReplaySection info={info} params={values} seed={seed} spec={replaySpec} at={view.at} onView={onView} onParams={runWith} />
        )}
      </section>
    </div>
  );
}
