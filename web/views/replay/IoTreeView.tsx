/*
 * IoTreeView.tsx - an inode's io_tree on the file-offset axis: each record
 * a range coloured by its bits (records that share a pixel merge, keeping
 * their count), the current lseek's range lock as a bracket from its offset
 * to EOF with the records it walks, ordered extents in flight as ticks.
 * Drawn on a canvas: a 1 GiB file has sixteen thousand records.
 */
import { useEffect, useMemo, useRef } from 'react';
import { fmtNum } from '../../model/format';
import { layoutIoTree } from '../../model/ioLayout';
import { ioRecords, type IoInode } from '../../model/replay';
import { INK, NEUTRAL } from '../common';

/** Bits in greys, darkest first (web/DESIGN.md: no hue may be read as a
 * kernel); a record shows its first bit set. */
const BIT_COLOURS: [number, string, string][] = [
  [1 << 0, NEUTRAL.strong, 'LOCKED'],
  [1 << 1, NEUTRAL.dark, 'DELALLOC'],
  [1 << 2, NEUTRAL.mid, 'DELALLOC_NEW'],
  [1 << 3, NEUTRAL.light, 'UPTODATE'],
  [~0, NEUTRAL.faint, 'other'],
];
const colourOf = (bits: number): string => (BIT_COLOURS.find(([b]) => bits & b) ?? BIT_COLOURS[4]!)[1];

const MiB = 1 << 20;
function offText(off: number): string {
  if (off >= MiB) return `${fmtNum(off / MiB)} MiB`;
  return `${fmtNum(off / 1024)} KiB`;
}

export interface IoTreeViewProps {
  io: IoInode;
  /** i_size (the axis ends there) */
  size: number;
  width: number;
  /** the event position the state is at (redraws) */
  pos: number;
  /** the newest change at the position: records changed by it are outlined */
  lastEvent?: number;
}

export function IoTreeView({ io, size, width, pos, lastEvent }: IoTreeViewProps) {
  const ref = useRef<HTMLCanvasElement | null>(null);
  const recs = useMemo(() => ioRecords(io), [io, pos]);
  const end = Math.max(size, recs.length ? recs[recs.length - 1]!.end + 1 : 1);
  const h = 64;
  const L = useMemo(() => layoutIoTree(recs, { width, from: 0, to: end, lockPass: io.lockPass, ordered: io.ordered }), [recs, width, end, io.lockPass, io.ordered]);
  useEffect(() => {
    const c = ref.current;
    if (!c) return;
    const dpr = typeof window !== 'undefined' ? window.devicePixelRatio || 1 : 1;
    c.width = Math.round(width * dpr);
    c.height = Math.round(h * dpr);
    const g = c.getContext('2d');
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, h);
    // the file
    g.fillStyle = '#fff';
    g.fillRect(0, 22, width, 18);
    g.strokeStyle = NEUTRAL.mid;
    g.lineWidth = 1;
    g.strokeRect(0.5, 22.5, width - 1, 17);
    for (const r of L.rects) {
      g.fillStyle = colourOf(r.bits);
      g.fillRect(r.x, 22, Math.max(1, r.w), 18);
      if (lastEvent !== undefined && r.at === lastEvent) {
        g.strokeStyle = '#000';
        g.lineWidth = 1.5;
        g.strokeRect(r.x - 1, 21, Math.max(1, r.w) + 2, 20);
      }
    }
    // the range lock: offset -> EOF
    if (L.lock) {
      const recent = lastEvent !== undefined && pos - 1 - L.lock.at < 40;
      // hatched: the records under it show through
      g.strokeStyle = recent ? 'rgba(17,20,24,0.55)' : 'rgba(17,20,24,0.25)';
      g.lineWidth = 1;
      g.save();
      g.beginPath();
      g.rect(L.lock.x0, 14, Math.max(1, L.lock.x1 - L.lock.x0), 32);
      g.clip();
      for (let x = L.lock.x0 - 32; x < L.lock.x1; x += 6) {
        g.beginPath();
        g.moveTo(x, 46);
        g.lineTo(x + 32, 14);
        g.stroke();
      }
      g.restore();
      g.strokeStyle = INK;
      g.lineWidth = 2;
      g.beginPath();
      g.moveTo(L.lock.x0, 18);
      g.lineTo(L.lock.x0, 12);
      g.lineTo(L.lock.x1 - 1, 12);
      g.lineTo(L.lock.x1 - 1, 18);
      g.stroke();
    }
    // ordered extents in flight
    g.fillStyle = '#000';
    for (const o of L.ordered) g.fillRect(o.x0, 44, Math.max(1, o.x1 - o.x0), 4);
    // axis
    g.fillStyle = '#333';
    g.font = '12px system-ui, sans-serif';
    g.textBaseline = 'top';
    g.fillText('0', 0, 50);
    const endText = offText(end);
    g.fillText(endText, width - g.measureText(endText).width, 50);
  }, [L, width, end, lastEvent, pos]);
  const bitsHere = new Set(recs.map((r) => r.bits));
  return (
    <figure className="io-view" data-testid="io-view">
      <div className="tree-head">
        <span className="tree-name">io_tree of inode {io.ino}</span>
        <span className="muted" data-testid="io-count">
          {' '}
          {fmtNum(recs.length)} records
          {io.lockPass && (
            <>
              {' '}
              · range lock {offText(io.lockPass.start)} → EOF walks <b>{fmtNum(io.lockPass.records)}</b> record{io.lockPass.records === 1 ? '' : 's'}
            </>
          )}
          {io.ordered.size > 0 && ` · ${io.ordered.size} ordered extent${io.ordered.size === 1 ? '' : 's'} in flight`}
        </span>
      </div>
      <canvas ref={ref} style={{ width, height: h }} role="img" aria-label={`io_tree: ${recs.length} records`} />
      <div className="tree-legend">
        {BIT_COLOURS.filter(([bit]) => [...bitsHere].some((x) => (bit === ~0 ? x & ~15 : x & bit))).map(([, c, n]) => (
          <span key={n}>
            <i className="swatch" style={{ background: c, outline: `1px solid ${NEUTRAL.mid}` }} /> {n}
          </span>
        ))}
        <span>
          <i className="swatch swatch-hatch" /> lseek's range lock (offset → EOF)
        </span>
      </div>
    </figure>
  );
}
