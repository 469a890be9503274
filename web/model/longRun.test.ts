import { describe, expect, it } from 'vitest';
import { LONG_FACTOR, isLongRun, longRunText } from './longRun';

describe('long runs', () => {
  it('are more than LONG_FACTOR times the default work', () => {
    expect(isLongRun({ work: 200000, defaultWork: 20000 })).toBe(true);
    expect(isLongRun({ work: LONG_FACTOR * 20000, defaultWork: 20000 })).toBe(false);
    expect(isLongRun({ work: 2000, defaultWork: 20000 })).toBe(false);
    expect(isLongRun({ work: 1e9, defaultWork: 0 })).toBe(false); // no estimate: never asks
  });
  it('say what they ask for, against the default', () => {
    expect(longRunText({ work: 200000, defaultWork: 20000 }, 'operations')).toBe(
      "These settings ask for 200,000 operations, 10 times the published setup's 20,000: a long run, so it has not started.",
    );
  });
});
