import { describe, expect, it } from 'vitest';
import { spoilersIn, verdictValue } from './lessonSpoilers';

const shown = (text: string, value: number, unit?: string): string[] => spoilersIn(text, value, unit).map((s) => s.shown);

describe('spoilersIn: does a text show the answer?', () => {
  it('finds the value rounded as written, in its unit family', () => {
    expect(shown('one accounting call of 744 ms', 744.3, 'ms')).toEqual(['744 ms']);
    expect(shown('about 740 ms', 744.3, 'ms')).toEqual(['740 ms']);
    expect(shown('the call takes 0.74 s', 744.3, 'ms')).toEqual(['0.74 s']);
    expect(shown('a median of 8.53 µs', 8.53, 'µs')).toEqual(['8.53 µs']);
    expect(shown('climbing to 16,946 records', 16946, 'records')).toEqual(['16,946 records']);
    expect(shown('some 17,000', 16946, 'records')).toEqual(['17,000']);
    expect(shown('148,721 IO/s, or 149k', 148721, 'IO/s')).toEqual(['148,721 IO/s', '149k']);
    expect(shown('3,010 ms asleep', 3.01, 's')).toEqual(['3,010 ms']);
  });

  it('one significant digit counts only with the unit after it', () => {
    expect(shown('700 ms', 744, 'ms')).toEqual(['700 ms']);
    expect(shown('5 calls', 5, 'calls')).toEqual(['5 calls']);
    expect(shown('five calls, one each', 5, 'calls')).toEqual(['five calls']);
    expect(shown('random seed 1 · step 5 · 4 KiB pages', 5, 'calls')).toEqual([]);
    expect(shown('random seed 1', 1, 'records')).toEqual([]);
    expect(shown('visits 1 record', 1, 'records')).toEqual(['1 record']);
    expect(shown('80k IOPS', 80100, 'IO/s')).toEqual(['80k IOPS']);
  });

  it('leaves other numbers alone', () => {
    expect(shown('16 subvolumes of 512 files, 30 s after the transaction began, in 5.10', 744, 'ms')).toEqual([]);
    expect(shown('the RFC measured 770.74 ms', 744, 'ms')).toEqual([]);
    expect(shown('4 KiB', 4.2, 'records')).toEqual([]);
    expect(shown('4096 and 2048', 4.1, 'ms')).toEqual([]);
    expect(shown('0 of 53', 0, 'calls')).toEqual([]);
  });

  it('reads the value a verdict shows', () => {
    expect(verdictValue('The simulation gives 744 ms, 1.49× higher than your 500 ms.')).toBe(744);
    expect(verdictValue('Close: the simulation gives 16,946 records, within 2× of your 10,000 records.')).toBe(16946);
    expect(verdictValue('Right: the simulation gives 8.53 µs, as you said.')).toBe(8.53);
    expect(verdictValue('the simulation gives 3.2×10⁻⁴ s')).toBeCloseTo(3.2e-4);
    expect(verdictValue('no number')).toBeNull();
  });
});
