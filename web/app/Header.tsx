/* Header.tsx - the brand, navigation (the patches by number; the device and the lessons, each by its short name, its title on hover), the emphasis badge and the focus / contrast / help buttons. */
import { useLayoutEffect, useRef } from 'react';
import type { ExperimentInfo } from '../engine/types';
import type { Lesson } from '../model/lessonFormat';
import type { Route } from '../model/urlState';
import { patchExperiments } from '../model/patches';

interface Props {
  experiments: ExperimentInfo[] | null;
  lessons: Lesson[];
  route: Route;
  /** what the presenter emphasises, shown in the header (it covered the form's Reset when it floated) */
  badge?: React.ReactNode;
  contrast: boolean;
  onHelp(): void;
  onFocus(): void;
  onContrast(): void;
}

export function Header({ experiments, lessons, route, badge, contrast, onHelp, onFocus, onContrast }: Props) {
  const cur = route.page === 'experiment' ? `exp/${route.name}` : route.page === 'lesson' ? `lesson/${route.id}` : route.page === 'sandbox' ? 'sandbox' : '';
  const link = (to: string, label: React.ReactNode, testid: string, title?: string) => (
    <a key={to} href={`#/${to}`} className={`nav-link${cur === to ? ' nav-on' : ''}`} aria-current={cur === to ? 'page' : undefined} data-testid={testid} title={title}>
      {label}
    </a>
  );
  const patches = patchExperiments(experiments);
  // the header stays on top: what else stays in view (a lesson's picture column) sits below it
  const ref = useRef<HTMLElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const set = (): void => document.documentElement.style.setProperty('--header-h', `${Math.ceil(el.getBoundingClientRect().height)}px`);
    set();
    const ro = new ResizeObserver(set);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return (
    <header className="top chrome" ref={ref}>
      <a href="#/" className="brand" data-testid="nav-home">
        <span className="brand-mark" aria-hidden="true">
          ▦
        </span>{' '}
        btrfs patch lab
      </a>
      <nav className="nav" aria-label="Main">
        {/* groups wrap as wholes: "Lessons" never ends a line without its numbers; the
            patches come first, so a narrow bar keeps them on its first line */}
        <span className="nav-group nav-group-first">
          {patches.map((e) =>
            link(
              `exp/${e.name}`,
              <>
                <span className="seed">{e.seed}</span> {e.name}
              </>,
              `nav-exp-${e.name}`,
              `patch ${e.seed}: ${e.title}`,
            ),
          )}
        </span>
        <span className="nav-group nav-group-lessons">
          {link('exp/fio', 'The device', 'nav-device')}
          {link('sandbox', 'Sandbox', 'nav-sandbox', 'Sandbox: your own commands on a fresh file system, every tree drawn as it changes')}
          {lessons.length > 0 && (
            // the lessons by name (the title on hover and in the keys overlay)
            <span className="nav-lessons" role="group" aria-label="Lessons">
              <span className="nav-label nav-label-sep">Lessons</span>
              {lessons.map((l) => link(`lesson/${l.id}`, l.short, `nav-lesson-${l.id}`, `Lesson: ${l.title}`))}
            </span>
          )}
        </span>
      </nav>
      <div className="top-actions">
        {badge}
        <button type="button" className="btn-quiet" onClick={onContrast} aria-pressed={contrast} title="High-contrast projector theme (c)" aria-label="High-contrast projector theme (c)" data-testid="contrast-toggle">
          <span className="btn-word">Contrast</span> <kbd>c</kbd>
        </button>
        <button type="button" className="btn-quiet" onClick={onFocus} title="Focus mode (f)" aria-label="Focus mode (f)" data-testid="focus-toggle">
          <span className="btn-word">Focus</span> <kbd>f</kbd>
        </button>
        <button type="button" className="btn-quiet" onClick={onHelp} title="Keyboard shortcuts (?)" aria-label="Keyboard shortcuts (?)" data-testid="help-toggle">
          <span className="btn-word">Keys</span> <kbd>?</kbd>
        </button>
      </div>
    </header>
  );
}
