/*
 * App.tsx - the shell: URL-driven routing (model/urlState), the engine's
 * experiment list, the lessons, the keyboard actions table, the help
 * overlay and focus mode. The page never runs the engine itself: everything
 * goes through the worker client.
 */
import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { LabError, type ExperimentInfo } from '../engine/types';
import { loadLessons } from '../lessons';
import { actionFor, type ActionContext, type KeyPlace } from '../model/actions';
import { nonDefault } from '../model/params';
import { formatHash, parseHash, type Emphasis, type ViewState } from '../model/urlState';
import { ChartThemeContext, chartTheme, useWindowWidth } from '../views/common/theme';
import { KERNEL_COLOR } from '../views/common/palette';
import { activePlayer, PageCommandsContext, type PageCommands } from './commands';
import { engine } from './engine';
import { ErrorBanner } from './ErrorBanner';
import { Header } from './Header';
import { HelpOverlay } from './HelpOverlay';
import { Home } from './Home';
import { isStringRecord, loadJson } from './storage';
import { testHook } from './testHook';
import { usePublished } from './usePublished';

// Each page's code is its own chunk, loaded when the page opens; the
// route's chunk is asked for as this module runs, beside the engine's
// compile and registry, not after the first render.
const loadExperimentPage = () => import('./ExperimentPage');
const loadLessonPlayer = () => import('./LessonPlayer');
const loadSandboxPage = () => import('./SandboxPage');
const ExperimentPage = lazy(() => loadExperimentPage().then((m) => ({ default: m.ExperimentPage })));
const LessonPlayer = lazy(() => loadLessonPlayer().then((m) => ({ default: m.LessonPlayer })));
const SandboxPage = lazy(() => loadSandboxPage().then((m) => ({ default: m.SandboxPage })));
if (typeof window !== 'undefined') {
  const r = parseHash(window.location.hash).route.page;
  if (r === 'experiment') void loadExperimentPage();
  else if (r === 'lesson') void loadLessonPlayer();
  else if (r === 'sandbox') void loadSandboxPage();
}

const NEXT_EMPHASIS: Record<Emphasis, Emphasis> = { none: 'before', before: 'after', after: 'none' };

/** Is the key event coming from a place where the user types (and does that field hand ← / → to the page)? */
const keyPlace = (t: EventTarget | null): KeyPlace =>
  t instanceof HTMLElement && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable)
    ? t.dataset.stepKeys === 'all'
      ? 'idle-field'
      : t.dataset.stepKeys === 'on'
        ? 'step-field'
        : 'field'
    : 'page';

/**
 * The view state from the location. An experiment link without parameters
 * gets what this browser last typed there (the URL is then rewritten to say
 * so, keeping links honest).
 */
function readLocation(): ViewState {
  const st = parseHash(window.location.hash);
  const r = st.route;
  if (r.page === 'experiment' && Object.keys(r.params).length === 0) {
    const saved = loadJson<Record<string, string>>(`form:${r.name}`, {}, isStringRecord);
    if (Object.keys(saved).length > 0) {
      const restored: ViewState = { ...st, route: { ...r, params: saved } };
      window.history.replaceState(null, '', formatHash(restored));
      return restored;
    }
  }
  return st;
}

export function App() {
  const [view, setView] = useState<ViewState>(() => readLocation());
  const [experiments, setExperiments] = useState<ExperimentInfo[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [help, setHelp] = useState(false);
  /** Bumped by every navigation from outside the page (a link, back / forward,
   * an edited address): the experiment page runs what the new URL says. */
  const [navKey, setNavKey] = useState(0);
  const commands = useRef<PageCommands>({});
  const windowWidth = useWindowWidth();
  const theme = useMemo(() => chartTheme(windowWidth, view.focus, !!view.contrast), [windowWidth, view.focus, view.contrast]);

  /** Go to a state: the URL is the source of truth (push for pages, replace for edits). */
  const go = useCallback((st: ViewState, replace = false) => {
    const h = formatHash(st);
    if (h !== window.location.hash) window.history[replace ? 'replaceState' : 'pushState'](null, '', h);
    setView(st);
  }, []);

  useEffect(() => {
    const onHash = (): void => {
      setView(readLocation());
      setNavKey((k) => k + 1);
    };
    window.addEventListener('hashchange', onHash);
    window.addEventListener('popstate', onHash);
    return () => {
      window.removeEventListener('hashchange', onHash);
      window.removeEventListener('popstate', onHash);
    };
  }, []);

  useEffect(() => {
    engine
      .list()
      .then((xs) => {
        setExperiments(xs);
        // the experiments with an experiment page: the sandbox has its own
        // (#/sandbox, e2e/sandbox.spec.ts), not a form and a Run button
        testHook().experiments = xs.filter((e) => e.name !== 'sandbox').map((e) => e.name);
      })
      .catch((e: unknown) => {
        setExperiments([]);
        setLoadError(LabError.from(e).message);
      });
  }, []);

  const route = view.route;

  const lessonLoad = useMemo(
    () =>
      loadLessons(
        experiments && experiments.length > 0
          ? { experiments: experiments.map((e) => ({ name: e.name, variants: e.variants, metrics: e.metrics, params: e.params })) }
          : undefined,
      ),
    [experiments],
  );
  // the published rows the page needs that the list leaves out (the device's measured points)
  const routeLesson = route.page === 'lesson' ? lessonLoad.lessons.find((l) => l.id === route.id) : undefined;
  const published = usePublished(
    experiments,
    route.page === 'experiment' ? [route.name] : routeLesson ? routeLesson.steps.map((s) => s.scenario.experiment) : [],
  );
  useEffect(() => {
    testHook().lessons = lessonLoad.lessons.map((l) => l.id);
  }, [lessonLoad]);

  useEffect(() => {
    document.documentElement.classList.toggle('focus-mode', view.focus);
    document.documentElement.classList.toggle('contrast', !!view.contrast);
  }, [view.focus, view.contrast]);

  // A new page or lesson step opens at its top, not at the scroll position
  // of the one before (→ in a lesson used to land mid-text).
  const pageKey = route.page === 'lesson' ? `lesson/${route.id}/${route.step}` : route.page === 'experiment' ? `exp/${route.name}` : route.page === 'sandbox' ? 'sandbox' : 'home';
  useEffect(() => {
    window.scrollTo(0, 0);
  }, [pageKey]);

  // Keyboard: one handler, driven by the actions table.
  const viewRef = useRef(view);
  viewRef.current = view;
  const helpRef = useRef(help);
  helpRef.current = help;
  useEffect(() => {
    const ctx: ActionContext = {
      run: () => commands.current.run?.(),
      cancel: () => commands.current.cancel?.(),
      leaveField: () => {
        const a = document.activeElement;
        if (a instanceof HTMLElement && keyPlace(a) !== 'page') a.blur();
      },
      typeGuess: (k) => commands.current.typeGuess?.(k) ?? false,
      next: () => commands.current.next?.(),
      prev: () => commands.current.prev?.(),
      cycleEmphasis: () => go({ ...viewRef.current, emphasis: NEXT_EMPHASIS[viewRef.current.emphasis] }, true),
      toggleFocus: () => go({ ...viewRef.current, focus: !viewRef.current.focus }, true),
      toggleContrast: () => go({ ...viewRef.current, contrast: !viewRef.current.contrast || undefined }, true),
      toggleHelp: () => setHelp((h) => !h),
      closeOverlay: () => {
        if (!helpRef.current) return false;
        setHelp(false);
        return true;
      },
      arrow: (dir, shift) => {
        if (activePlayer.current) activePlayer.current.step(dir, shift ? 'op' : 'event');
        else if (!shift) (dir > 0 ? commands.current.next : commands.current.prev)?.();
      },
      playPause: () => {
        if (!activePlayer.current) return false;
        activePlayer.current.playPause();
        return true;
      },
    };
    const onKey = (e: KeyboardEvent): void => {
      if (e.defaultPrevented || e.isComposing) return;
      const a = actionFor(e, keyPlace(e.target));
      if (!a) return;
      if (a.perform(ctx, e) !== false) e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [go]);

  let page: React.ReactNode;
  if (route.page === 'sandbox') {
    page = (
      <SandboxPage
        script={route.script}
        at={route.at}
        compare={route.compare}
        params={route.params}
        onChange={(next, push) => go({ ...view, route: { page: 'sandbox', params: route.params, ...next } }, !push)}
      />
    );
  } else if (route.page === 'experiment' && route.name === 'sandbox') {
    // the sandbox has its own page (a script, not a form)
    page = <ErrorBanner error="The sandbox has its own page: open #/sandbox." />;
  } else if (route.page === 'experiment') {
    const info = published.experiments?.find((e) => e.name === route.name);
    page = info ? (
      <ExperimentPage
        key={info.name}
        info={info}
        params={route.params}
        seed={route.seed}
        badSeed={route.badSeed}
        emphasis={view.emphasis}
        view={route.view ?? {}}
        lessons={lessonLoad.lessons}
        navKey={navKey}
        onChange={(params, seed) => {
          // the view's state stays (a cursor), but a sweep was run for the old parameters
          const { sweep: _sweep, ...keep } = route.view ?? {};
          go({ ...view, route: { page: 'experiment', name: route.name, params: nonDefault(info.params, params), seed, ...(Object.keys(keep).length > 0 ? { view: keep } : {}) } }, true);
        }}
        onView={(patch) => {
          const next = { ...(route.view ?? {}) };
          for (const [k, v] of Object.entries(patch)) if (v === undefined) delete next[k];
          else next[k] = v;
          const { view: _old, ...rest } = route;
          go({ ...view, route: Object.keys(next).length > 0 ? { ...rest, view: next } : rest }, true);
        }}
      />
    ) : experiments === null ? (
      <p className="loading">Loading the engine…</p>
    ) : published.experiments === null ? (
      <p className="loading">Loading the measurements…</p>
    ) : (
      <ErrorBanner error={`There is no experiment called "${route.name}" in this engine build.`} />
    );
  } else if (route.page === 'lesson') {
    const lesson = lessonLoad.lessons.find((l) => l.id === route.id);
    page = !lesson ? (
      <ErrorBanner error={`There is no lesson called "${route.id}".`} />
    ) : experiments === null ? (
      <p className="loading">Loading the engine…</p>
    ) : published.experiments === null ? (
      <p className="loading">Loading the measurements…</p>
    ) : (
      <LessonPlayer
        key={lesson.id}
        lesson={lesson}
        step={route.step}
        badStep={route.badStep}
        experiments={published.experiments}
        emphasis={view.emphasis}
        onStep={(step) => go({ ...view, route: { page: 'lesson', id: route.id, step } })}
      />
    );
  } else {
    page = <Home experiments={experiments} lessons={lessonLoad.lessons} />;
  }

  const emphBadge = view.emphasis !== 'none' && (
    <span className="emph-badge" style={{ borderColor: KERNEL_COLOR[view.emphasis] }} data-testid="emph-badge">
      emphasis: {view.emphasis} <kbd>e</kbd>
    </span>
  );
  return (
    <PageCommandsContext.Provider value={commands}>
      <ChartThemeContext.Provider value={theme}>
        <div className={`app${view.focus ? ' app-focus' : ''}${view.emphasis !== 'none' ? ` emph-${view.emphasis}` : ''}`}>
          <Header
            experiments={experiments}
            lessons={lessonLoad.lessons}
            route={route}
            badge={emphBadge}
            contrast={!!view.contrast}
            onHelp={() => setHelp((h) => !h)}
            onFocus={() => go({ ...view, focus: !view.focus }, true)}
            onContrast={() => go({ ...view, contrast: !view.contrast || undefined }, true)}
          />
          {view.focus && (
            <div className="focus-strip">
              {emphBadge}
              <button type="button" className="focus-exit" onClick={() => go({ ...view, focus: false }, true)} title="Leave focus mode (f)">
                exit focus <kbd>f</kbd>
              </button>
            </div>
          )}
          <main className="page">
            {loadError && <ErrorBanner error={`The engine did not load: ${loadError}`} />}
            {published.error && <ErrorBanner error={`The page opened without its published figures: ${published.error}`} />}
            {lessonLoad.errors.map((e) => (
              <ErrorBanner key={e} error={`A lesson failed validation: ${e}`} />
            ))}
            <Suspense fallback={<p className="loading">Loading the page…</p>}>{page}</Suspense>
          </main>
          {help && <HelpOverlay lessons={lessonLoad.lessons} onClose={() => setHelp(false)} />}
        </div>
      </ChartThemeContext.Provider>
    </PageCommandsContext.Provider>
  );
}
