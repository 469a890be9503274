/* Home.tsx - the front page: what the lab is, the device, the five patches and the lessons. */
import type { ExperimentInfo } from '../engine/types';
import type { Lesson } from '../model/lessonFormat';
import { patchExperiments } from '../model/patches';

interface Props {
  experiments: ExperimentInfo[] | null;
  lessons: Lesson[];
}

export function Home({ experiments, lessons }: Props) {
  const patches = patchExperiments(experiments);
  const tools = (experiments ?? []).filter((e) => e.seed === '-');
  // the lab is built for five patches (../shared/seeds): count what the engine has
  const count = patches.length === 0 ? '' : patches.length >= 5 ? ' (the five the lab is built for)' : ` (${patches.length} of the five the lab is built for, so far)`;
  return (
    <div className="home" data-testid="home">
      <section className="hero">
        <h1>btrfs patch lab</h1>
        <p className="lede">
          Real btrfs performance patches{count}, run{' '}
          <span className="c-before">before</span> and <span className="c-after">after</span> on a simulated
          file system and a block device fitted to measured SSDs. Every number says where it comes from.
        </p>
      </section>
      <div className="home-grid">
        <section className="card">
          <h2>Start here</h2>
          <a className="card-link" href="#/exp/fio" data-testid="home-device">
            <strong>The device</strong>
            <span>Latency and throughput of the simulated SSDs against the fio measurements they were fitted to.</span>
          </a>
          {lessons.map((l) => (
            <a key={l.id} className="card-link" href={`#/lesson/${l.id}`} data-testid={`home-lesson-${l.id}`}>
              <strong>Lesson: {l.title}</strong>
              <span>{l.summary}</span>
            </a>
          ))}
        </section>
        <section className="card">
          <h2>The patches</h2>
          {experiments === null && <p className="muted">Loading the engine…</p>}
          {experiments !== null && patches.length === 0 && <p className="muted">This engine build has no patch experiments yet.</p>}
          {patches.map((e) => (
            <a key={e.name} className="card-link" href={`#/exp/${e.name}`}>
              <strong>
                <span className="seed">{e.seed}</span> {e.name}
              </strong>
              <span>{e.title}</span>
            </a>
          ))}
          {tools.length > 0 && <h3>Other experiments</h3>}
          {tools.map((e) => (
            <a key={e.name} className="card-link" href={e.name === 'sandbox' ? '#/sandbox' : `#/exp/${e.name}`} data-testid={`home-tool-${e.name}`}>
              <strong>{e.name}</strong>
              <span>{e.title}</span>
            </a>
          ))}
        </section>
      </div>
    </div>
  );
}
