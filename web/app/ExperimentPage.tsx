/*
 * ExperimentPage.tsx - one experiment: its parameter form (state in the
 * URL and in localStorage), Run / Cancel with progress, and the results of
 * the before and after runs (or the single base run) side by side.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { LabError, type ExperimentInfo, type RunSpec, type WorkEstimate } from '../engine/types';
import { defaultParams, nonDefault, stepParams, validateAll, withDefaults } from '../model/params';
import type { Emphasis } from '../model/urlState';
import type { Lesson } from '../model/lessonFormat';
import { patchToggles } from '../model/patches';
import { useWindowWidth } from '../views/common/theme';
import { PatchToggles } from './PatchToggles';
import { usePageCommands } from './commands';
import { ErrorBanner } from './ErrorBanner';
import { ParamForm } from './ParamForm';
import { collectFor, headlineNoisy, replayFor, stepsFor } from '../views/registry';
import { ReplaySection } from './ReplaySection';
import { PagePicture } from '../views/replay/PagePicture';
import { PAGE_RECORDINGS } from '../views/replay/pageRecording';
import { usePageRecording } from './usePageRecording';
import { firstRunFor } from './firstRun';
import { Results } from './Results';
import { RunBar } from './RunBar';
import { engine } from './engine';
import { isLongRun, longRunText } from '../model/longRun';
import { SeedsPanel, useSeeds } from './SeedsPanel';
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
  // A limit between parameters (files that must fit the device...) is the
  // engine's to check (lab_estimate refuses it, naming the parameter, as
  // lab_open would): shown at that field, and nothing runs.
  const [limit, setLimit] = useState<{ key: string; name: string; message: string } | null>(null);
  const valuesKey = JSON.stringify(values);
  const formErrors = useMemo(() => validateAll(info.params, values), [info, values]);
  const errors = useMemo(
    () => (limit && limit.key === `${info.name}:${valuesKey}` && !formErrors[limit.name] ? { ...formErrors, [limit.name]: limit.message } : formErrors),
    [formErrors, limit, info.name, valuesKey],
  );
  const invalid = Object.keys(errors).length > 0;
  // run-to-run variation (engine/src/kernel/variation.def): on by
  // default; off is the deterministic model, one click away (v.variation)
  const variation = view.variation === 'off' ? 'off' : 'on';
  const specs: RunSpec[] = useMemo(
    () => info.variants.map((variant) => ({ experiment: info.name, variant, params: values, seed, ...(variation === 'off' ? { variation } : {}) })),
    [info, values, seed, variation],
  );
  const runner = useRunner();
  // a headline that is one run of a noisy process is drawn with its spread:
  // the runs over the seeds start by themselves once the page's run is done;
  // with variation off every seed draws the same conditions, so one run is
  // the whole distribution and nothing starts by itself
  const spreadNeeded = variation === 'on' && headlineNoisy(info, values);
  const seeds = useSeeds(info, values, seed, variation, spreadNeeded && runner.state.status === 'done' && runner.state.key === specKey(specs));
  // below 1200 px the form is one column with the results, folded (the
  // comparison must not start a screen down); it opens by itself on an error
  const wide = useWindowWidth() >= 1200;
  const [openNarrow, setOpenNarrow] = useState(false);
  const changed = Object.keys(nonDefault(info.params, values)).length + (seed !== 1 ? 1 : 0);
  const { state } = runner;
  const replaySpec = replayFor(info.name);
  // the trees / lseeks the patch acts on, recorded once the runs are in
  const pageSpec = PAGE_RECORDINGS[info.name];
  const pageRec = usePageRecording(pageSpec, state);
  // a page at its defaults whose published size is slow draws a classroom-scale run first (firstRun.ts)
  const first = firstRunFor(info.name);
  const atDefaults = Object.keys(nonDefault(info.params, values)).length === 0;
  const firstSpecs = useMemo(() => (first && atDefaults ? specs.map((sp) => ({ ...sp, params: { ...sp.params, ...first.params } })) : null), [first, atDefaults, specs]);
  const showingFirst = firstSpecs !== null && state.key === specKey(firstSpecs);
  const stale = state.key !== null && state.key !== specKey(specs) && !showingFirst;
  const shownParams = showingFirst ? firstSpecs![0]!.params : values;

  // a long run waiting for the user's go (below)
  const [ask, setAsk] = useState<{ key: string; estimate: WorkEstimate } | null>(null);

  // A link is a view, not an edit: what the user saved for this page is
  // replaced only when the user changes something here (a field, the seed,
  // a reset, a view's or the keyboard's step), never by opening a link.
  const edit = (p: Record<string, string>, s: number): void => {
    setAsk(null);
    saveJson(`form:${info.name}`, p);
    onChange(p, s);
  };

  // Opening a page (or a shared link) runs it once, so the link shows its
  // result; unless the user already started a run on it (a click or key
  // can land before this fires), which it must not cancel. A setting whose
  // work (the experiment's own estimate, lab_estimate) is more than
  // LONG_FACTOR times the published setup's asks first.
  const limitOf = (err: unknown): { name: string; message: string } | null => {
    const le = LabError.from(err);
    if (le.codeName !== 'LAB_ERANGE') return null;
    const p = info.params.find((q) => le.message.startsWith(`${q.name} `));
    return p ? { name: p.name, message: le.message } : null;
  };
  useEffect(() => {
    const key = `${info.name}:${valuesKey}`;
    if (Object.keys(formErrors).length > 0 || Object.keys(nonDefault(info.params, values)).length === 0) return setLimit(null);
    let live = true;
    engine.estimate(info.name, values).then(
      () => live && setLimit(null),
      (err) => {
        const l = limitOf(err);
        if (live) setLimit(l && { key, ...l });
      },
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [info.name, valuesKey, formErrors]);
  const autoRan = useRef<string | null>(null);
  const userRan = useRef<string | null>(null);
  const autoRun = (key: string): void => {
    const go = (): void => {
      if (userRan.current !== info.name && specKey(specs) === key) void runner.run(firstSpecs ?? specs, collectFor(info.name));
    };
    if (Object.keys(nonDefault(info.params, values)).length === 0) return go();
    engine.estimate(info.name, values).then(
      (e) => {
        if (!isLongRun(e)) return go();
        if (userRan.current !== info.name && specKey(specs) === key) setAsk({ key, estimate: e });
      },
      (err) => {
        if (!limitOf(err)) go(); // the run itself says what is wrong; a limit shows at its field
      },
    );
  };
  useEffect(() => {
    if (autoRan.current === info.name || invalid) return;
    autoRan.current = info.name;
    if (userRan.current === info.name) return;
    autoRun(specKey(specs));
  });

  // A link with other parameters opened on this page (or back / forward):
  // run what it says, as opening it fresh would.
  const ranNav = useRef(navKey);
  useEffect(() => {
    if (ranNav.current === navKey) return;
    ranNav.current = navKey;
    setAsk(null);
    if (invalid || state.key === specKey(specs)) return;
    userRan.current = null;
    autoRun(specKey(specs));
  });

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
    setAsk(null);
    void runner.run(specs, collectFor(info.name));
  };

  /** Variation on or off: in the URL, and run (the comparison is one click away). */
  const setVariation = (on: boolean): void => {
    onView({ variation: on ? undefined : 'off' });
    if (invalid) return;
    userRan.current = info.name;
    void runner.run(
      info.variants.map((variant) => ({ experiment: info.name, variant, params: values, seed, ...(on ? {} : { variation: 'off' }) })),
      collectFor(info.name),
    );
  };

  /** A view asked for other parameters: show them in the form and URL, and run them. */
  const runWith = (p: Record<string, string>): void => {
    const next = { ...values, ...p };
    edit(nonDefault(info.params, next), seed);
    if (Object.keys(validateAll(info.params, next)).length > 0) return;
    userRan.current = info.name;
    void runner.run(
      info.variants.map((variant) => ({ experiment: info.name, variant, params: next, seed, ...(variation === 'off' ? { variation } : {}) })),
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
          onChange={(name, text) => edit(nonDefault(info.params, { ...values, [name]: text }), seed)}
          onSeed={(s) => edit(nonDefault(info.params, values), s)}
          onReset={() => edit(nonDefault(info.params, defaultParams(info.params)), 1)}
          onRemove={(name) => edit(nonDefault(info.params, Object.fromEntries(Object.entries(values).filter(([k]) => k !== name))), seed)}
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
        <label className="variation-toggle chrome" title="A seed draws what varies between two real runs (process and syscall costs, the drive's state, the timer wheel's phase, allocation luck); off, every seed draws what seed 1 draws: the same conditions, with and without the patch" data-testid="variation-toggle">
          <input type="checkbox" checked={variation === 'on'} onChange={(e) => setVariation(e.target.checked)} /> run-to-run variation
        </label>
        {badSeed !== undefined && (
          <p className="notice" role="status" data-testid="bad-seed">
            The link&apos;s random seed <code>{badSeed}</code> is not a whole number from 0 to 999,999,999,999,999, so random seed {seed} is used.
          </p>
        )}
        {ask && ask.key === specKey(specs) && state.status !== 'running' && (
          <p className="notice" role="status" data-testid="long-run">
            {longRunText(ask.estimate, info.workUnit)}{' '}
            <button type="button" className="btn" onClick={run} data-testid="long-run-confirm">
              Run it
            </button>
          </p>
        )}
        {showingFirst && first && (
          <p className="notice" role="status" data-testid="first-run">
            Drawn at {first.label}, the same difference in a fraction of the time.{' '}
            <button type="button" className="btn" onClick={run} disabled={running} data-testid="first-run-full">
              Run the published size
            </button>
          </p>
        )}
        {state.error && <ErrorBanner error={state.error} />}
        <Results
          info={info}
          params={shownParams}
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
          spread={{ rows: seeds.rows, state: seeds.state, total: seeds.total, run: seeds.run, stop: seeds.stop }}
          pictures={pageSpec && !invalid && <PagePicture spec={pageSpec} rec={pageRec} view={view} onView={onView} params={shownParams} />}
          controls={<PatchToggles patch={`patch ${info.seed}`} toggles={patchToggles(info, values, lessons)} onSet={(param, value) => runWith({ [param]: value })} />}
        />
        {replaySpec && !invalid && (
          <ReplaySection info={info} params={values} seed={seed} spec={replaySpec} at={view.at} onView={onView} onParams={runWith} />
        )}
        <SeedsPanel info={info} params={values} seed={seed} variation={variation} disabled={invalid} sweep={seeds} />
      </section>
    </div>
  );
}
