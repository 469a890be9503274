/*
 * LessonPlayer.tsx - play a lesson step by step: read the setting and what
 * to watch for, predict a number, run the step's scenario, see the picture
 * and the checks, then look at its numbers and read why. Nothing from the
 * run is on screen before it: the "look at" and "why" (which state its
 * figures), the checks, the verdict and the diff's notes on the picture
 * appear once the step has run. Checks are evaluated by model/lessonChecks
 * (the same code the headless lesson test uses). Guesses persist in
 * localStorage; the verdict judges the guess as it stood when the step ran.
 *
 * Layout (styles.css "lessons"): from 1200 px, the reading on the left and,
 * on the right, a column that stays in view (it scrolls on its own): the
 * question, its field and the run first, then the checks and pictures, so
 * the question is above the fold and a diff note can bring its marks into
 * view without moving the note. Narrower, and in focus mode, one column.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import type { ExperimentInfo, RunResult, RunSpec, Variant } from '../engine/types';
import type { RunTicket } from '../engine/client';
import { BACKGROUND } from '../engine/pool';
import type { PreviousRun } from '../views/types';
import { evaluateStep, judgePrediction, parseGuess, predictionMetrics, statMetrics, type SeedMetrics, type StepMetrics } from '../model/lessonChecks';
import type { Lesson } from '../model/lessonFormat';
import { nonDefault, withDefaults } from '../model/params';
import { checkStepClaims } from '../model/lessonClaims';
import { metricsOf, referenceSpec, stepDeps, stepSeeds, stepSpecs, stepVariation } from '../model/lessonRun';
import type { SeedRuns } from '../model/spread';
import { SeedStrips } from './SeedsPanel';
import { formatHash, type Emphasis } from '../model/urlState';
import { usePageCommands } from './commands';
import { DiffView } from './DiffView';
import { engine } from './engine';
import { ErrorBanner } from './ErrorBanner';
import { Markdown } from './Markdown';
import { collectFor, replayFor } from '../views/registry';
import { LessonMoment } from './LessonMoment';
import { Results } from './Results';
import { RunBar } from './RunBar';
import { isString, useStoredState } from './storage';
import { testHook } from './testHook';
import { useRunner } from './useRunner';

interface Props {
  lesson: Lesson;
  step: number;
  /** the link's step text when it was not a step (urlState); the page opened the nearest */
  badStep?: string;
  experiments: ExperimentInfo[];
  emphasis: Emphasis;
  onStep(step: number): void;
}

/** A step over seeds: its runs' pictures (seed `seed`'s) with the medians as their numbers. */
function withMedians(runs: Partial<Record<Variant, RunResult>>, medians: StepMetrics): Partial<Record<Variant, RunResult>> {
  return Object.fromEntries(Object.entries(runs).map(([v, r]) => [v, r && medians[v as Variant] ? { ...r, metrics: { ...r.metrics, ...medians[v as Variant] } } : r]));
}

// Metrics and results of steps already run, per lesson, for this page's lifetime.
const sessionMetrics = new Map<string, StepMetrics[]>();
const sessionRuns = new Map<string, Partial<Record<Variant, RunResult>>[]>();
// a step over several seeds: each seed's metrics and runs
const sessionSeeds = new Map<string, SeedMetrics>();
const sessionSeedRuns = new Map<string, (SeedRuns[] | undefined)[]>();

export function LessonPlayer({ lesson, step, badStep, experiments, emphasis, onStep }: Props) {
  const n = lesson.steps.length;
  const i = Math.min(Math.max(0, step), n - 1);
  // a link to a step this lesson has not (step=-1, 99999, abc, or past its
  // end) says so, as a bad seed does, over the nearest step
  const stepProblem = badStep ?? (step !== i ? String(step) : null);
  const s = lesson.steps[i]!;
  const info = experiments.find((e) => e.name === s.scenario.experiment);
  const runner = useRunner();
  const [all, setAll] = useState<StepMetrics[]>(() => sessionMetrics.get(lesson.id) ?? []);
  const [guess, setGuess] = useStoredState<string>(`pred:${lesson.id}:${i}`, '', isString);
  const [ranStep, setRanStep] = useState<number | null>(null);
  const [seedsAll, setSeedsAll] = useState<SeedMetrics>(() => sessionSeeds.get(lesson.id) ?? []);
  // which of the step's seeds is running (a step over seeds)
  const [seedsDone, setSeedsDone] = useState<number | null>(null);
  // a step over seeds: the runs of its other seeds, on the pool beside the runner's
  const background = useRef<RunTicket[]>([]);
  const dropBackground = (): void => {
    for (const t of background.current) t.cancel();
    background.current = [];
  };
  const cancel = (): void => {
    dropBackground();
    runner.cancel();
  };
  useEffect(() => dropBackground, []);
  // the guess as it stood when the step ran (or was last submitted with Enter): what the verdict judges
  const [submitted, setSubmitted] = useState<number | null>(null);
  // ... as it was typed: while the field still holds it, the projector's keys (f, c, ?) work from the field
  const [judgedText, setJudgedText] = useState<string | null>(null);
  // Enter with no number in the field: say so rather than run without a guess
  const [needGuess, setNeedGuess] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  const column = useRef<HTMLDivElement>(null);
  useEffect(() => {
    runner.reset();
    setRanStep(null);
    setSubmitted(null);
    setJudgedText(null);
    setNeedGuess(false);
    if (column.current) column.current.scrollTop = 0;
    // → from the field lands here with the field still focused: give the page its keys back (f, r, e...); digits still reach the field
    if (field.current && document.activeElement === field.current) field.current.blur();
  }, [lesson.id, i]); // a new step starts from a clean run

  // The previous step's run of the same experiment, shown as a ghost for comparison.
  const prevStep = lesson.steps[i - 1];
  const prevRuns = i > 0 ? sessionRuns.get(lesson.id)?.[i - 1] : undefined;
  const previous: PreviousRun | undefined =
    prevStep && prevRuns && prevStep.scenario.experiment === s.scenario.experiment
      ? { label: `step ${i}`, params: prevStep.scenario.params, runs: prevRuns }
      : undefined;

  const params = useMemo(() => (info ? withDefaults(info.params, s.scenario.params) : {}), [info, s]);
  const here = ranStep === i ? all[i] : undefined;
  const outcomes = here ? evaluateStep(s, i, all, seedsAll) : null;
  const seedRuns = ranStep === i ? sessionSeedRuns.get(lesson.id)?.[i] : undefined;
  // the numbers the text states about the run, checked on the run drawn
  const unitOf = (m: string): string => info?.metricInfo.find((x) => x.name === m)?.unit ?? '';
  const claims = here ? checkStepClaims(s, i, all, unitOf, seedsAll) : [];
  // a step that runs one kernel shows the other beside it, same setup, as a pinned reference
  const refSpec = info ? referenceSpec(s, info) : null;
  const guessValue = s.prediction ? parseGuess(guess, s.prediction.unit) : null;
  const predicted = here && s.prediction ? predictionMetrics(s.prediction, i, all, seedsAll) : undefined;
  const verdict = predicted && s.prediction && submitted !== null ? judgePrediction(s.prediction, submitted, predicted) : null;
  const ran = here !== undefined;

  const run = async (): Promise<void> => {
    if (!info || runner.state.status === 'running') return;
    setSubmitted(guessValue);
    setJudgedText(guess);
    setNeedGuess(false);
    const acc = [...all];
    for (const d of stepDeps(lesson, i)) {
      const ds = lesson.steps[d]!;
      const dInfo = experiments.find((e) => e.name === ds.scenario.experiment);
      if (acc[d] || !dInfo) continue;
      const r = await runner.run(stepSpecs(ds, dInfo), collectFor(dInfo.name));
      if (!r) return;
      acc[d] = metricsOf(r);
      const runs = sessionRuns.get(lesson.id) ?? [];
      runs[d] = r;
      sessionRuns.set(lesson.id, runs);
    }
    const ref = referenceSpec(s, info);
    const seedAcc = [...seedsAll];
    let r: Partial<Record<Variant, RunResult>> | null;
    if (s.scenario.seeds) {
      // the seeds side by side on the engine's pool: the scenario's own seed
      // through the runner (its run is the picture, with progress and
      // cancel), the others behind it at background priority; a cancel or a
      // newer run drops them all. Same seeds, same results as one by one.
      const seeds = stepSeeds(s);
      const specsOf = (seed: number): RunSpec[] => [...stepSpecs(s, info, seed), ...(ref ? [{ ...ref, seed }] : [])];
      const tickets = seeds.slice(1).map((seed) => specsOf(seed).map((sp) => engine.run(sp, undefined, undefined, { priority: BACKGROUND })));
      background.current = tickets.flat();
      let done = 0;
      setSeedsDone(0);
      const others = tickets.map(async (ts) => {
        const rs = await Promise.all(ts.map((t) => t.promise));
        setSeedsDone(++done);
        return rs;
      });
      others.forEach((o) => o.catch(() => {})); // awaited below; a cancel must not surface unhandled
      r = await runner.run(specsOf(seeds[0]!), collectFor(info.name));
      let rest: RunResult[][] | null = null;
      if (r) {
        setSeedsDone(++done);
        rest = await Promise.all(others).catch(() => null);
      }
      dropBackground();
      setSeedsDone(null);
      if (!r || !rest) return;
      const ownOf = (res: Partial<Record<Variant, RunResult>>): Partial<Record<Variant, RunResult>> =>
        Object.fromEntries(Object.entries(res).filter(([v]) => s.scenario.variants.includes(v as Variant)));
      const rows: SeedRuns[] = [
        { seed: seeds[0]!, runs: ownOf(r) },
        ...rest.map((rs, k) => ({ seed: seeds[k + 1]!, runs: ownOf(Object.fromEntries(specsOf(seeds[k + 1]!).map((sp, j) => [sp.variant, rs[j]!]))) })),
      ];
      const per: StepMetrics[] = rows.map((row) => metricsOf(row.runs));
      seedAcc[i] = per;
      sessionSeeds.set(lesson.id, seedAcc);
      const sr = sessionSeedRuns.get(lesson.id) ?? [];
      sr[i] = rows;
      sessionSeedRuns.set(lesson.id, sr);
      setSeedsAll(seedAcc);
    } else {
      r = await runner.run([...stepSpecs(s, info), ...(ref ? [ref] : [])], collectFor(info.name));
    }
    if (!r) return;
    // checks and claims read the step's own kernels only, as the headless lesson test does
    const own = Object.fromEntries(Object.entries(r).filter(([v]) => s.scenario.variants.includes(v as Variant)));
    // a step over seeds: its checks and numbers read the medians
    acc[i] = s.scenario.seeds && seedAcc[i] ? statMetrics(seedAcc[i]!) : metricsOf(own);
    sessionMetrics.set(lesson.id, acc);
    const runs = sessionRuns.get(lesson.id) ?? [];
    runs[i] = own;
    sessionRuns.set(lesson.id, runs);
    setAll(acc);
    setRanStep(i);
    testHook().lessonChecks[`${lesson.id}/${i}`] = evaluateStep(s, i, acc, seedAcc).map((o) => o.pass);
    testHook().lessonClaims[`${lesson.id}/${i}`] = checkStepClaims(s, i, acc, (m) => info.metricInfo.find((x) => x.name === m)?.unit ?? '', seedAcc).map((c) => ({ text: c.claim.text, ok: c.ok, shown: c.shown }));
  };

  const next = (): void => onStep(Math.min(n - 1, i + 1));
  const prev = (): void => onStep(Math.max(0, i - 1));
  /** Enter in the field: judge the guess; run the step if it has not run yet. */
  const submit = (): void => {
    if (guessValue === null) {
      setNeedGuess(true);
      return;
    }
    if (ran) {
      setSubmitted(guessValue);
      setJudgedText(guess);
    } else void run();
  };
  /** A digit typed anywhere on the step goes to its prediction field (a lecture's keyboard flow). */
  const typeGuess = (key: string): boolean => {
    if (!s.prediction || !field.current || ran) return false;
    field.current.focus();
    setGuess(guess + key);
    setNeedGuess(false);
    return true;
  };
  usePageCommands({ run: () => void run(), cancel, next, prev, typeGuess });

  const labLink = info
    ? formatHash({
        route: { page: 'experiment', name: info.name, params: nonDefault(info.params, params), seed: s.scenario.seed, ...(stepVariation(s) === 'off' ? { view: { variation: 'off' } } : {}) },
        emphasis: 'none',
        focus: false,
      })
    : '#/';

  const predict = s.prediction && (
    <div className="predict" data-testid="predict">
      <label htmlFor="prediction">{s.prediction.prompt}</label>
      <div className="predict-row">
        <input
          id="prediction"
          ref={field}
          data-testid="prediction"
          type="text"
          inputMode="decimal"
          autoComplete="off"
          value={guess}
          placeholder="your guess"
          aria-describedby="prediction-hint"
          // ← / → step the lesson from here once the guess is in (or the field is empty), and f, c, ? work
          // while there is nothing to edit (empty, or the judged guess as typed): App's key handler
          data-step-keys={guess.trim() === '' || (ran && guess === judgedText) ? 'all' : ran ? 'on' : undefined}
          onChange={(e) => {
            setGuess(e.target.value);
            setNeedGuess(false);
          }}
          onKeyDown={(e) => {
            if (e.key !== 'Enter') return;
            e.preventDefault();
            submit();
          }}
        />
        {s.prediction.unit && <span className="unit">{s.prediction.unit}</span>}
      </div>
      {guess.trim() !== '' && guessValue === null ? (
        <div className="field-error" id="prediction-hint">
          Type a positive number, such as 1500, 1,500 or 1.5k.
        </div>
      ) : needGuess ? (
        <div className="field-error" id="prediction-hint" data-testid="need-guess">
          Type your guess first (or press <kbd>r</kbd> outside the field to run without one).
        </div>
      ) : (
        <div className="field-help" id="prediction-hint">
          {ran ? 'Change it and press Enter to judge another guess.' : <>Type your guess, then press <kbd>Enter</kbd> to run.</>}
        </div>
      )}
      {verdict && (
        <div className={`verdict verdict-${verdict.verdict}`} data-testid="verdict" data-actual={verdict.actual} role="status">
          {verdict.message}
        </div>
      )}
    </div>
  );

  return (
    <div className="lesson" data-testid={`lesson-${lesson.id}`} data-ran={ran ? 'yes' : 'no'}>
      <div className="lesson-text">
        <div className="exp-kicker">
          lesson{lesson.seed !== '-' ? ` · patch ${lesson.seed}` : ''} · {lesson.title}
        </div>
        <nav className="steps" aria-label="Lesson steps">
          <button type="button" className="btn-quiet" onClick={prev} disabled={i === 0} data-testid="step-prev" title="Previous step (←)">
            ← <span className="sr">Previous</span>
          </button>
          {lesson.steps.map((st, k) => (
            <button
              type="button"
              key={k}
              className={`step-dot${k === i ? ' step-dot-on' : ''}${sessionMetrics.get(lesson.id)?.[k] ? ' step-dot-done' : ''}`}
              onClick={() => onStep(k)}
              aria-current={k === i ? 'step' : undefined}
              aria-label={`Step ${k + 1}: ${st.title}`}
              title={st.title}
            >
              {k + 1}
            </button>
          ))}
          <button type="button" className="btn-quiet" onClick={next} disabled={i === n - 1} data-testid="step-next" title="Next step (→)">
            <span className="sr">Next</span> →
          </button>
        </nav>
        {stepProblem !== null && (
          <p className="notice" role="status" data-testid="bad-step">
            The link&apos;s step <code>{stepProblem}</code> is not a step of this lesson (a link numbers its {n} steps <code>step=0</code> to <code>step={n - 1}</code>), so step {i + 1} is shown.
          </p>
        )}
        <h1 data-testid="step-title">
          <span className="step-no">{i + 1}.</span> {s.title}
        </h1>
        <div className="lesson-prose lesson-setting" data-testid="setting">
          <Markdown text={s.text} />
        </div>
        {ran ? (
          <div className="look" data-testid="look">
            <strong>Look at:</strong> <Markdown text={s.look} className="md-inline" />
          </div>
        ) : (
          <div className="look watch" data-testid="watch">
            <strong>Watch for:</strong> <Markdown text={s.watch} className="md-inline" />
          </div>
        )}
        {outcomes && (
          <div className="why lesson-prose" data-testid="why">
            <h2>Why</h2>
            <Markdown text={s.why} />
          </div>
        )}
        {s.diff && (
          <div className="lesson-prose lesson-diff">
            {/* the notes say what each hunk changes in the picture: there is one once the step has run */}
            <DiffView key={`${lesson.id}/${i}`} title={s.diff.title} text={s.diff.text} notes={ran ? (s.diff.notes ?? []) : []} />
            {!ran && (s.diff.notes ?? []).length > 0 && <p className="muted diff-later">Run the step to see what each hunk changes in the picture.</p>}
          </div>
        )}
      </div>
      <div className="lesson-picture" ref={column}>
        <div className="lesson-ask">
          {predict}
          <RunBar
            status={runner.state.status}
            progress={runner.state.progress}
            current={runner.state.current}
            invalid={!info}
            stale={false}
            onRun={() => void run()}
            onCancel={cancel}
            label="Run this step"
          />
        </div>
        <div className="scenario">
          <code>
            {[
              `${s.scenario.experiment} ${s.scenario.variants.join('+')}${refSpec ? ` (${refSpec.variant}: reference)` : ''}`,
              ...(Object.keys(s.scenario.params).length > 0 ? [Object.entries(s.scenario.params).map(([k, v]) => `${k}=${v}`).join(' ')] : []),
              s.scenario.seeds ? `random seeds ${s.scenario.seed}-${s.scenario.seed + s.scenario.seeds - 1}` : `random seed ${s.scenario.seed}`,
            ].join(' · ')}
          </code>{' '}
          <a href={labLink}>open in the lab →</a>
        </div>
        {seedsDone !== null && s.scenario.seeds && (
          <p className="muted" data-testid="lesson-seed-at">
            {seedsDone} of {s.scenario.seeds} seeds done
          </p>
        )}
        {!info && <ErrorBanner error={`This step needs the experiment "${s.scenario.experiment}", which this engine build does not have.`} />}
        {runner.state.error && <ErrorBanner error={runner.state.error} />}
        {outcomes && (
          <>
            <h2 className="checks-title">Checks on this run</h2>
            <ul className="checks" data-testid="checks">
              {outcomes.map((o, k) => (
                <li key={k} className={o.pass ? 'check-pass' : 'check-fail'} data-testid="check" data-pass={o.pass}>
                  <span className="check-mark" aria-hidden="true">
                    {o.pass ? '✓' : '✗'}
                  </span>
                  {o.check.label} <span className="muted">({o.detail})</span>
                </li>
              ))}
              {claims
                .filter((c) => !c.ok)
                .map((c, k) => (
                  <li key={`claim${k}`} className="check-fail" data-testid="claim-wrong">
                    <span className="check-mark" aria-hidden="true">
                      ✗
                    </span>
                    The text says {c.claim.text} ({c.claim.variant}.{c.claim.metric}); this run gives {c.shown}
                    {c.problem ? `: ${c.problem}` : ''}
                  </li>
                ))}
            </ul>
          </>
        )}
        {info && s.moment && here && <LessonMoment key={`${lesson.id}/${i}`} moment={s.moment} specs={stepSpecs(s, info)} stepKey={`${lesson.id}/${i}`} spec={replayFor(info.name)} />}
        {info && seedRuns && seedRuns.length > 0 && (
          <SeedStrips info={info} params={params} rows={seedRuns} metrics={[...new Set(s.checks.map((c) => c.metric))]} exportName={`${lesson.id}-step${i + 1}`} />
        )}
        {info && seedRuns && seedRuns.length > 0 && (
          <p className="muted prose" data-testid="lesson-seeds-note">
            The numbers below are the median of the {seedRuns.length} runs, as the checks and the text read them where they name no other statistic (a standard deviation, a maximum); the pictures are seed {s.scenario.seed}&apos;s run.
          </p>
        )}
        {info && (
          <Results
            info={info}
            params={params}
            variants={refSpec ? info.variants : s.scenario.variants}
            runs={ranStep === i ? (seedRuns && here ? withMedians(runner.state.results, here) : runner.state.results) : {}}
            running={runner.state.status === 'running'}
            emphasis={emphasis}
            stale={false}
            previous={previous}
            seed={s.scenario.seed}
            {...(refSpec ? { reference: refSpec.variant } : {})}
          />
        )}
      </div>
    </div>
  );
}
