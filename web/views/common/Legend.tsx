/*
 * Legend.tsx - one legend for every chart: a swatch (box, line, dashed
 * line, diamond, ring) and its label per item, in a wrapping row.
 */
import type { ReactNode } from 'react';

export interface LegendItem {
  label: ReactNode;
  color: string;
  shape?: 'box' | 'line' | 'dash' | 'diamond' | 'ring';
  /** a key for React and tests (default: the label when it is a string) */
  id?: string;
  testId?: string;
}

function Swatch({ color, shape = 'box' }: { color: string; shape?: LegendItem['shape'] }) {
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
    default:
      return (
        <svg width="14" height="14" aria-hidden="true">
          <rect width="14" height="14" fill={color} stroke="#fff" strokeWidth="0.5" />
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
          <Swatch color={it.color} shape={it.shape} /> {it.label}
        </span>
      ))}
    </div>
  );
}
