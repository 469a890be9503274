import { describe, expect, it, vi } from 'vitest';
import { ACTIONS, actionFor, type ActionContext } from './actions';
import { parseDiff } from './diff';
import { parseInline, parseMd } from './mdlight';
import { diffLabel } from './runDiff';

const ev = (key: string, mods: Partial<{ ctrlKey: boolean; metaKey: boolean; altKey: boolean }> = {}) => ({
  key,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...mods,
});

describe('actions table', () => {
  it('maps keys to actions and ignores modified keys and typing in fields', () => {
    expect(actionFor(ev('r'), false)?.id).toBe('run');
    expect(actionFor(ev('ArrowRight'), false)?.id).toBe('next');
    expect(actionFor(ev('p'), false)?.id).toBe('prev');
    expect(actionFor(ev('?'), false)?.id).toBe('help');
    expect(actionFor(ev('r', { ctrlKey: true }), false)).toBeNull();
    expect(actionFor(ev('r'), true)).toBeNull();
    expect(actionFor(ev('Escape'), true)?.id).toBe('cancel');
  });

  it('Escape closes the overlay first, then cancels', () => {
    const ctx: ActionContext = {
      run: vi.fn(), cancel: vi.fn(), next: vi.fn(), prev: vi.fn(), cycleEmphasis: vi.fn(), toggleFocus: vi.fn(), toggleContrast: vi.fn(), toggleHelp: vi.fn(),
      closeOverlay: vi.fn().mockReturnValueOnce(true).mockReturnValueOnce(false), arrow: vi.fn(), playPause: vi.fn(), leaveField: vi.fn(), typeGuess: vi.fn(),
    };
    const esc = actionFor(ev('Escape'), false);
    esc?.perform(ctx, ev('Escape'));
    expect(ctx.cancel).not.toHaveBeenCalled();
    expect(ctx.leaveField).not.toHaveBeenCalled();
    esc?.perform(ctx, ev('Escape'));
    expect(ctx.cancel).toHaveBeenCalledTimes(1);
    // ... and leaves the field it was typed in
    expect(ctx.leaveField).toHaveBeenCalledTimes(1);
  });

  it('a lesson prediction field hands ← / → to the page (not n / p, not r); digits go to the field', () => {
    expect(actionFor(ev('ArrowRight'), 'step-field')?.id).toBe('next');
    expect(actionFor(ev('ArrowLeft'), 'step-field')?.id).toBe('prev');
    expect(actionFor(ev('ArrowRight'), 'field')).toBeNull();
    for (const k of ['n', 'p', 'r', 'f', '5']) expect(actionFor(ev(k), 'step-field'), k).toBeNull();
    expect(actionFor(ev('Escape'), 'step-field')?.id).toBe('cancel');
    expect(actionFor(ev('7'), 'page')?.id).toBe('guess');
    expect(actionFor(ev('7'), 'field')).toBeNull();
    const ctx = { typeGuess: vi.fn().mockReturnValue(false) } as unknown as ActionContext;
    // no prediction on the page: not handled, the key keeps its default
    expect(actionFor(ev('7'), 'page')?.perform(ctx, ev('7'))).toBe(false);
    expect(ctx.typeGuess).toHaveBeenCalledWith('7');
  });

  it('a prediction field with nothing to edit (empty, or the judged guess) also hands the projector keys to the page', () => {
    expect(actionFor(ev('f'), 'idle-field')?.id).toBe('focus');
    expect(actionFor(ev('c'), 'idle-field')?.id).toBe('contrast');
    expect(actionFor(ev('?'), 'idle-field')?.id).toBe('help');
    expect(actionFor(ev('ArrowRight'), 'idle-field')?.id).toBe('next');
    // keys a guess is typed with stay in the field: 2e3, 1.5k, digits; n / p / r too
    for (const k of ['e', 'k', '5', '.', 'n', 'p', 'r']) expect(actionFor(ev(k), 'idle-field'), k).toBeNull();
    for (const k of ['f', 'c', '?']) expect(actionFor(ev(k), 'step-field'), k).toBeNull();
  });

  it('arrows go to the replay when one is open (shift: by operation), n / p to the setups; space plays', () => {
    const ctx: ActionContext = {
      run: vi.fn(), cancel: vi.fn(), next: vi.fn(), prev: vi.fn(), cycleEmphasis: vi.fn(), toggleFocus: vi.fn(), toggleContrast: vi.fn(), toggleHelp: vi.fn(),
      closeOverlay: vi.fn(), arrow: vi.fn(), playPause: vi.fn().mockReturnValue(false), leaveField: vi.fn(), typeGuess: vi.fn().mockReturnValue(false),
    };
    const right = { ...ev('ArrowRight'), shiftKey: true };
    actionFor(right, false)?.perform(ctx, right);
    expect(ctx.arrow).toHaveBeenCalledWith(1, true);
    actionFor(ev('ArrowLeft'), false)?.perform(ctx, ev('ArrowLeft'));
    expect(ctx.arrow).toHaveBeenCalledWith(-1, false);
    actionFor(ev('n'), false)?.perform(ctx, ev('n'));
    expect(ctx.next).toHaveBeenCalledTimes(1);
    expect(ctx.arrow).toHaveBeenCalledTimes(2);
    const space = actionFor(ev(' '), false);
    expect(space?.id).toBe('replay-play');
    // no replay open: not handled, so the key keeps its default
    expect(space?.perform(ctx, ev(' '))).toBe(false);
  });

  it('has unique ids and a label and key for each action', () => {
    expect(new Set(ACTIONS.map((a) => a.id)).size).toBe(ACTIONS.length);
    for (const a of ACTIONS) {
      expect(a.label.length).toBeGreaterThan(5);
      expect(a.keys.length).toBeGreaterThan(0);
    }
  });
});

describe('markdown-light', () => {
  it('parses paragraphs, lists, bold and code', () => {
    const b = parseMd('A **bold** `x`\nsame para\n\n- one\n- two `y`\nafter');
    expect(b).toEqual([
      { type: 'p', inl: [{ t: 'text', s: 'A ' }, { t: 'b', s: 'bold' }, { t: 'text', s: ' ' }, { t: 'code', s: 'x' }, { t: 'text', s: ' same para' }] },
      { type: 'ul', items: [[{ t: 'text', s: 'one' }], [{ t: 'text', s: 'two ' }, { t: 'code', s: 'y' }]] },
      { type: 'p', inl: [{ t: 'text', s: 'after' }] },
    ]);
  });
  it('leaves unclosed markers and markup as text', () => {
    expect(parseInline('a **b <i>')).toEqual([{ t: 'text', s: 'a **b <i>' }]);
  });
});

describe('unified diff', () => {
  it('numbers old and new lines from the hunk header', () => {
    const d = parseDiff('--- a/f.c\n+++ b/f.c\n@@ -10,3 +10,3 @@ fn\n ctx\n-old\n+new\n ctx2\n');
    expect(d.map((l) => l.kind)).toEqual(['file', 'file', 'hunk', 'ctx', 'del', 'add', 'ctx']);
    expect(d[3]).toMatchObject({ oldNo: 10, newNo: 10 });
    expect(d[4]).toMatchObject({ kind: 'del', text: 'old', oldNo: 11 });
    expect(d[5]).toMatchObject({ kind: 'add', text: 'new', newNo: 11 });
    expect(d[6]).toMatchObject({ oldNo: 12, newNo: 12 });
  });
  it("an excerpt's hunk header that names only its function: a hunk, its lines unnumbered", () => {
    const d = parseDiff('--- a/f.c\n+++ b/f.c\n@@ btrfs_truncate() @@\n ctx\n-old\n+new\n@@ -5,1 +5,1 @@\n-x\n+y\n');
    expect(d.map((l) => l.kind)).toEqual(['file', 'file', 'hunk', 'ctx', 'del', 'add', 'hunk', 'del', 'add']);
    expect(d[3]!.oldNo).toBeUndefined();
    expect(d[5]!.newNo).toBeUndefined();
    expect(d[8]).toMatchObject({ newNo: 5 });
  });
});

describe('run diff label', () => {
  it('names the settings of the previous run that differ', () => {
    expect(diffLabel({ rw: 'randwrite', iodepth: '1', bs: '4096' }, { rw: 'randwrite', iodepth: '32', bs: '4096' })).toBe('iodepth=1');
    expect(diffLabel({ a: '1', b: '2' }, { a: '3', b: '4' })).toBe('a=1, b=2');
    expect(diffLabel({ a: '1' }, { a: '1' }, 1, 2)).toBe('seed 1');
    expect(diffLabel({ a: '1' }, { a: '1' })).toBe('same settings');
  });
});
