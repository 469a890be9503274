import { describe, expect, it } from 'vitest';
import { checkClaim, claimsIn, parseShown, withoutClaimMarks } from './lessonClaims';
import { parseInline } from './mdlight';

describe('numbers a lesson states about its run', () => {
  it('finds the claims in a text and shows the text without their marks', () => {
    const t = 'one call of [[744 ms|before.account_avg_ms]] against [[5|after.account_calls@1]] calls';
    expect(claimsIn(t)).toEqual([
      { text: '744 ms', variant: 'before', metric: 'account_avg_ms' },
      { text: '5', variant: 'after', metric: 'account_calls', step: 1 },
    ]);
    expect(withoutClaimMarks(t)).toBe('one call of 744 ms against 5 calls');
    expect(parseInline('a [[744 ms|before.account_avg_ms]] b')[1]).toEqual({ t: 'claim', s: '744 ms', ref: 'before.account_avg_ms' });
  });

  it('reads the precision the text writes', () => {
    expect(parseShown('0.74 s')).toEqual({ value: 0.74, unit: 's', step: 0.01 });
    expect(parseShown('about 17,000')).toEqual({ value: 17000, unit: '', step: 1000 });
    expect(parseShown('16,946')).toEqual({ value: 16946, unit: '', step: 1 });
    expect(parseShown('8.53 µs')?.step).toBeCloseTo(0.01);
    expect(parseShown('no number')).toBeNull();
  });

  it('checks the run rounded as the text writes it, converting units of one kind', () => {
    const c = (text: string) => ({ text, variant: 'before' as const, metric: 'm' });
    expect(checkClaim(c('744 ms'), 744.09941, 'ms').ok).toBe(true);
    expect(checkClaim(c('0.74 s'), 744.09941, 'ms').ok).toBe(true);
    expect(checkClaim(c('0.75 s'), 744.09941, 'ms')).toMatchObject({ ok: false, shown: '0.74 s' });
    expect(checkClaim(c('16,414'), 16414.13, 'count').ok).toBe(true);
    expect(checkClaim(c('16,420'), 16414.13, 'count').ok).toBe(false);
    expect(checkClaim(c('17,000'), 16946, 'count').ok).toBe(true);
    expect(checkClaim(c('55.8 ms'), 0.0557821e3, 'ms').ok).toBe(true);
    expect(checkClaim(c('8.53 µs'), 8.534, 'us').ok).toBe(true);
    expect(checkClaim(c('744'), 744, 'ms').problem).toMatch(/needs its unit/);
    expect(checkClaim(c('744 MiB'), 744, 'ms').problem).toMatch(/in MiB/);
    expect(checkClaim(c('1'), undefined, 'count').problem).toMatch(/no before.m/);
  });
});
