import { describe, expect, it } from 'vitest';
import { fmtOrdinal } from './format';

describe('fmtOrdinal', () => {
  it('gives English ordinals, teens included', () => {
    expect([1, 2, 3, 4, 8, 11, 12, 13, 21, 22, 23, 101, 111, 112, 1000].map(fmtOrdinal)).toEqual([
      '1st', '2nd', '3rd', '4th', '8th', '11th', '12th', '13th', '21st', '22nd', '23rd', '101st', '111th', '112th', '1000th',
    ]);
  });
});
