import { describe, expect, it } from 'vitest';
import { MAX_STEP, formatHash, parseHash, type ViewState } from './urlState';

describe('urlState', () => {
  it('round-trips an experiment with params, seed, emphasis and focus', () => {
    const st: ViewState = {
      route: { page: 'experiment', name: 'fio', params: { rw: 'randwrite', bs: '4096', device: 'consumer-ssd' }, seed: 42 },
      emphasis: 'after',
      focus: true,
    };
    const h = formatHash(st);
    expect(h).toBe('#/exp/fio?seed=42&p.bs=4096&p.device=consumer-ssd&p.rw=randwrite&emph=after&focus=1');
    expect(parseHash(h)).toEqual(st);
  });

  it('round-trips a lesson step and omits defaults', () => {
    const st: ViewState = { route: { page: 'lesson', id: 'ssd-4k-write', step: 2 }, emphasis: 'none', focus: false };
    expect(formatHash(st)).toBe('#/lesson/ssd-4k-write?step=2');
    expect(parseHash('#/lesson/ssd-4k-write?step=2')).toEqual(st);
    expect(parseHash('#/lesson/ssd-4k-write')).toEqual({ ...st, route: { ...st.route, step: 0 } });
  });

  it('falls back to safe values on garbage', () => {
    expect(parseHash('#/nonsense/x').route).toEqual({ page: 'home' });
    expect(parseHash('').route).toEqual({ page: 'home' });
    const r = parseHash('#/exp/fio?seed=-3&emph=sideways&step=x&p.=1');
    expect(r.route).toEqual({ page: 'experiment', name: 'fio', params: {}, seed: 1, badSeed: '-3' });
    expect(r.emphasis).toBe('none');
    // a seed that is not one is reported (the page says so), and the
    // corrected link no longer carries it
    expect(parseHash('#/exp/fio?seed=99999999999999999999').route).toMatchObject({ seed: 1, badSeed: '99999999999999999999' });
    expect(formatHash(parseHash('#/exp/fio?seed=abc&p.bs=512'))).toBe('#/exp/fio?p.bs=512');
    expect(parseHash('#/exp/fio?seed=7').route).not.toHaveProperty('badSeed');
  });

  it('does not throw on a malformed escape: the segment is kept as typed', () => {
    expect(parseHash('#/%E0%A4%A').route).toEqual({ page: 'home' });
    expect(parseHash('#/exp/%E0%A4%A?p.%ZZ=1').route).toEqual({ page: 'experiment', name: '%E0%A4%A', params: { '%ZZ': '1' }, seed: 1 });
    expect(parseHash('#/lesson/%ZZ?step=2').route).toEqual({ page: 'lesson', id: '%ZZ', step: 2 });
  });

  it('keeps a bad lesson step for a notice and opens the nearest step', () => {
    expect(parseHash('#/lesson/x?step=-1').route).toEqual({ page: 'lesson', id: 'x', step: 0, badStep: '-1' });
    expect(parseHash('#/lesson/x?step=99999').route).toEqual({ page: 'lesson', id: 'x', step: MAX_STEP, badStep: '99999' });
    expect(parseHash('#/lesson/x?step=abc').route).toEqual({ page: 'lesson', id: 'x', step: 0, badStep: 'abc' });
    expect(parseHash('#/lesson/x?step=2.6').route).toMatchObject({ step: 3, badStep: '2.6' });
    expect(parseHash('#/lesson/x?step=').route).toMatchObject({ step: 0, badStep: '' });
    expect(parseHash('#/lesson/x?step=3').route).not.toHaveProperty('badStep');
    // the corrected link drops it
    expect(formatHash(parseHash('#/lesson/x?step=-1'))).toBe('#/lesson/x');
  });

  it('keeps values with reserved characters intact', () => {
    const st: ViewState = { route: { page: 'experiment', name: 'qgroup-drop', params: { threshold: 'inf', note: 'a&b=c' }, seed: 1 }, emphasis: 'none', focus: false };
    expect(parseHash(formatHash(st))).toEqual(st);
  });
});
