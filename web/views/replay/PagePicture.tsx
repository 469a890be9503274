/*
 * PagePicture.tsx - an experiment page's own recorded picture, drawn as
 * soon as its recording arrives (the page's results come first): the lseek
 * picture on sparse-cp, the trees the patch acts on elsewhere (a player
 * over both kernels' recordings of the same window, at full scale). The
 * recording itself is made by the app (web/app/usePageRecording.ts) and
 * comes in as props. While it is made, a placeholder of the picture's
 * height keeps the page from jumping.
 */
import type { ReactNode } from 'react';
import { fmtNum } from '../../model/format';
import { firstDivergenceFromOps, nthOp } from '../../model/trace';
import { LseekPicture } from './LseekPicture';
import type { PageRecordingSpec, PageRecordingState } from './pageRecording';
import { ReplayPanel } from './ReplayPanel';
import { ExtentItems } from './ExtentItems';

interface Props {
  spec: PageRecordingSpec;
  rec: PageRecordingState;
  /** the page's view state (v.cursor on sparse-cp, v.at for the player) */
  view?: Record<string, string>;
  onView?: (patch: Record<string, string | undefined>) => void;
  /** the runs' parameters (sparse-cp's extent + hole stride) */
  params: Record<string, string>;
}

function Shell({ children, status }: { children: ReactNode; status: string }) {
  return (
    <section className="page-picture" data-testid="page-picture" data-status={status}>
      {children}
    </section>
  );
}

export function PagePicture({ spec, rec, view, onView, params }: Props) {
  if (rec.status === 'idle' || rec.status === 'waiting' || rec.status === 'recording') {
    return (
      <Shell status={rec.status}>
        <div className="page-picture-wait figure" role="status" data-testid="page-picture-wait">
          {rec.status === 'recording' ? (
            <>
              Recording {rec.window} for the picture… {Math.round(rec.progress * 100)}%
            </>
          ) : (
            'The picture is recorded once the runs are in.'
          )}
        </div>
      </Shell>
    );
  }
  if (rec.status === 'error') {
    return (
      <Shell status="error">
        <p className="error" data-testid="page-picture-error">
          The picture&apos;s recording failed: {rec.error}{' '}
          <button type="button" className="btn-quiet" onClick={() => rec.recordFrom(null)}>
            try again
          </button>
        </p>
      </Shell>
    );
  }
  if (rec.status === 'none') {
    return (
      <Shell status="none">
        <p className="muted" data-testid="page-picture-none">
          {rec.window}
        </p>
      </Shell>
    );
  }
  const partial = rec.sides.filter((s) => !s.trace.complete);
  const windowNote = (
    <p className="muted page-picture-window" data-testid="page-picture-window">
      Recorded at this page&apos;s size, {rec.window}
      {partial.length > 0
        ? `, as far as a recording keeps (${rec.sides.map((s) => `${s.variant} ${fmtNum(s.trace.n)} events`).join(', ')})`
        : ` (${rec.sides.map((s) => `${s.variant} ${fmtNum(s.trace.n)} events`).join(', ')})`}
      , in {fmtNum(rec.wallMs / 1000)} s on this computer.
    </p>
  );
  if (spec.picture === 'lseek') {
    const stride = ((Number(params.extent_kib) || 4) + (Number(params.hole_kib) || 0)) * 1024;
    // the page's lseek cursor (SparseCpView's default: a quarter of the file)
    const cursor = view?.cursor !== undefined ? Number(view.cursor) : 0.25;
    return (
      <Shell status="done">
        <LseekPicture
          sides={rec.sides}
          fromFirst={rec.fromFirst}
          strideBytes={stride}
          cursor={cursor !== undefined && Number.isFinite(cursor) ? cursor : undefined}
          onCursor={onView ? (f) => onView({ cursor: String(f) }) : undefined}
        />
        {windowNote}
      </Shell>
    );
  }
  if (spec.picture === 'items') {
    return (
      <Shell status="done">
        <ExtentItems sides={rec.sides} />
        {windowNote}
      </Shell>
    );
  }
  // the player starts at the moment: the window's first operation, the
  // same one in both kernels
  // (where the two kernels first differ, if they do: qgroup-drop's first
  // early commit, bonnie's first leaf clone)
  const first = rec.sides[0]!.trace;
  const second = rec.sides[1]?.trace;
  const diverge = second ? firstDivergenceFromOps(first, second) : null;
  const opKind = first.kinds.find((k) => k.op && first.kind.includes(first.kindId[k.name]!))?.name;
  const own = spec.initial ? spec.initial(first) : -1;
  const start = own > 0 ? own : diverge ? diverge.a + 1 : opKind ? nthOp(first, opKind, 0) : -1;
  const caption = spec.caption && start > 0 ? spec.caption(first, second, start) : null;
  const cmp = spec.compare && start > 0 ? spec.compare(first, second, start) : null;
  return (
    <Shell status="done">
      <div className="figure page-trees" data-testid="page-trees" data-compare={cmp?.what} data-before={cmp?.before} data-after={cmp?.after}>
        <h2 className="replay-title">The trees, {rec.window}</h2>
        <ReplayPanel
          key={rec.sides.map((s) => s.trace.n).join()}
          runs={rec.sides}
          pickTrees={spec.pickTrees}
          keys={false}
          windowNote={false}
          testPrefix="page"
          initial={start > 0 ? { sync: 'op', pos: start } : undefined}
          at={view?.pat}
          onAt={onView ? (a) => onView({ pat: a ?? undefined }) : undefined}
        >
          <p className="muted replay-blurb">{spec.blurb}</p>
          {caption && (
            <p className="page-picture-caption" data-testid="page-picture-caption">
              {caption}
            </p>
          )}
        </ReplayPanel>
        {windowNote}
      </div>
    </Shell>
  );
}
