/*
 * Legend.tsx - one legend for every chart: a swatch (box, line, dashed
 * line, diamond, ring) and its label per item, in a wrapping row.
 */
import type { ReactNode } from 'react';

export interface LegendItem {
  label: ReactNode;
  color: string;
  shape?: 'box' | 'line' | 'dash' | 'diamond' | 'ring' | 'dot' | 'whisker';
  /** a key for React and tests (default: the label when it is a string) */
  id?: string;
  testId?: string;
  /** a box's outline (a white box needs one) */
  outline?: string;
  /** text drawn in place of a swatch ("3", "⋯"): what a label in the picture means */
  glyph?: string;
}

function Swatch({ color, shape = 'box', outline, glyph }: { color: string; shape?: LegendItem['shape']; outline?: string; glyph?: string }) {
  if (glyph !== undefined)
    return (
      <span className="legend-glyph" aria-hidden="true">
        {glyph}
      </span>
    );
  switch (shape) {
    case 'line':
    case 'dash':
      return (
        <svg width="28" height="12" aria-hidden="true">
          <line x1="1" x2="27" y1="6" y2="6" stroke={color} strokeWidth="3.5" strokeDasharray={shape === 'dash' ? '6 4' : undefined} />
        </svg>
      );
    case 'diamond':
      return (
        <svg width="16" height="16" aria-hidden="true">
          <rect x="4" y="4" width="8" height="8" transform="rotate(45 8 8)" fill={color} />
        </svg>
      );
    case 'ring':
      return (
        <svg width="16" height="16" aria-hidden="true">
          <rect x="4" y="4" width="8" height="8" transform="rotate(45 8 8)" fill="#fff" stroke={color} strokeWidth="1.8" />
        </svg>
      );
    case 'dot':
      return (
        <svg width="16" height="16" aria-hidden="true">
          <circle cx="8" cy="8" r="5" fill="#fff" stroke={color} strokeWidth="2" />
        </svg>
      );
    case 'whisker':
      return (
        <svg width="28" height="14" aria-hidden="true">
          <path d="M2 3v8M2 7h24M26 3v8" fill="none" stroke={color} strokeWidth="2" />
        </svg>
      );
    default:
      return (
        <svg width="14" height="14" aria-hidden="true">
          <rect x="0.5" y="0.5" width="13" height="13" fill={color} stroke={outline ?? '#fff'} strokeWidth={outline ? 1.5 : 0.5} />
        </svg>
      );
  }
}

export function Legend({ items, className }: { items: LegendItem[]; className?: string }) {
  if (items.length === 0) return null;
  return (
    <div className={`chart-legend${className ? ` ${className}` : ''}`}>
      {items.map((it, i) => (
        <span key={it.id ?? (typeof it.label === 'string' ? it.label : i)} data-testid={it.testId}>
          <Swatch color={it.color} shape={it.shape} outline={it.outline} glyph={it.glyph} /> {it.label}
        </span>
      ))}
    </div>
  );
}
