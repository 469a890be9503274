import { describe, expect, it } from 'vitest';
import { splitProfileNotes } from './profileNotes';

describe('splitProfileNotes', () => {
  it('splits on top-level semicolons and names the constants', () => {
    const items = splitProfileNotes(
      'max_queue: command slots (fitted): beyond them they wait; seg_bytes/gc_valid: drain (a; b) spread; host_ns is the rig CPU',
    );
    expect(items).toEqual([
      { head: 'max_queue', text: 'command slots (fitted): beyond them they wait' },
      { head: 'seg_bytes/gc_valid', text: 'drain (a; b) spread' },
      { text: 'host_ns is the rig CPU' },
    ]);
  });
  it('keeps a parenthesised list of constants in the head', () => {
    const [it0] = splitProfileNotes('write stalls (defer_ns, defer_max_ns, fitted): the controller owes work');
    expect(it0).toEqual({ head: 'write stalls (defer_ns, defer_max_ns, fitted)', text: 'the controller owes work' });
  });
  it('does not take a clause of prose for a name', () => {
    const [it0] = splitProfileNotes('no write was measured on this drive: writes use a cache');
    expect(it0).toEqual({ text: 'no write was measured on this drive: writes use a cache' });
  });
  it('returns nothing for empty notes and ignores empty items', () => {
    expect(splitProfileNotes('')).toEqual([]);
    expect(splitProfileNotes(' ; a: b ;')).toEqual([{ head: 'a', text: 'b' }]);
  });
});
