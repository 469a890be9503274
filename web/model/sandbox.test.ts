import { describe, expect, it } from 'vitest';
import { cmdDiff, complete, firstDifference, scriptParam, scriptPaths, splitScript, treesTouched, type SandboxCmd } from './sandbox';
import { formatHash, parseHash } from './urlState';

const cmd = (over: Partial<SandboxCmd>): SandboxCmd => ({
  line: 1,
  text: 'sync',
  op: 'sync',
  ran: 1,
  ns: 100,
  cows: { fs: 0, extent: 0, csum: 0, root: 0, log: 0 },
  items: { fs: 0, extent: 0, csum: 0, root: 0, log: 0 },
  ...over,
});

describe('sandbox script', () => {
  it('splits lines and semicolons, drops comments and blanks', () => {
    expect(splitScript('mkdir /d; touch /d/f\n\n# note\npwrite 0 4k # tail\n')).toEqual(['mkdir /d', 'touch /d/f', 'pwrite 0 4k']);
    expect(scriptParam(['a', 'b'])).toBe('a; b');
  });
  it('lives in the URL and comes back the same', () => {
    const st = parseHash('#/sandbox?sv=1&s=mkdir+%2Fd%0Atouch+%2Fd%2Ff&at=0&cmp=1&p.device=ideal');
    expect(st.route).toEqual({ page: 'sandbox', script: ['mkdir /d', 'touch /d/f'], at: 0, compare: true, params: { device: 'ideal' } });
    expect(parseHash(formatHash(st))).toEqual(st);
    expect(parseHash('#/sandbox').route).toEqual({ page: 'sandbox', script: [], compare: false, params: {} });
  });
});

describe('sandbox records', () => {
  it('names the trees a command touched (the fs tree always)', () => {
    expect(treesTouched(cmd({}))).toEqual(['fs']);
    expect(treesTouched(cmd({ cows: { fs: 0, extent: 1, csum: 0, root: 0, log: 2 }, items: { fs: 0, extent: 0, csum: 3, root: 0, log: 5 } }))).toEqual(['fs', 'extent', 'csum', 'log']);
  });
  it('finds the first command where two kernels differ, and what differs', () => {
    const a = [cmd({}), cmd({ ns: 200 }), cmd({ log_items: 3 })];
    const b = [cmd({}), cmd({ ns: 250 }), cmd({ log_items: 4 })];
    expect(firstDifference(a, b)).toEqual({ index: 1, what: ['time'] });
    expect(firstDifference(a, a)).toBeNull();
    expect(cmdDiff(a[2], b[2])).toEqual(['log items']);
    expect(firstDifference(a, a.slice(0, 2))).toEqual({ index: 2, what: ['ran on one kernel only'] });
  });
  it('completes command names, then the paths the script named', () => {
    expect(complete('fs', [])).toEqual(['fsync']);
    expect(complete('btrfs sub', [])).toContain('btrfs subvolume create');
    const paths = scriptPaths(['mkdir /d', 'touch /d/f', 'pwrite 0 4k']);
    expect(paths).toEqual(['/', '/d', '/d/f']);
    expect(complete('rm /d', paths)).toEqual(['rm /d/f']);
    expect(complete('pwrite 0', paths)).toEqual([]);
  });
});
