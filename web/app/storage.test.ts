import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isString, isStringRecord, loadJson, saveJson } from './storage';

const store = new Map<string, string>();
beforeEach(() => {
  store.clear();
  (globalThis as { localStorage?: unknown }).localStorage = {
    getItem: (k: string) => store.get(k) ?? null,
    setItem: (k: string, v: string) => void store.set(k, v),
  };
});
afterEach(() => {
  delete (globalThis as { localStorage?: unknown }).localStorage;
});

describe('loadJson', () => {
  it('reads back what was saved', () => {
    saveJson('form:fio', { bs: '8192' });
    expect(loadJson('form:fio', {}, isStringRecord)).toEqual({ bs: '8192' });
    saveJson('pred:x:0', '1.5k');
    expect(loadJson('pred:x:0', '', isString)).toBe('1.5k');
  });
  it('a value of the wrong shape reads as the fallback and stays stored', () => {
    for (const bad of ['null', '42', '"bs"', '[1,2]', '{"bs":8192}', '{"bs":null}', '{not json']) {
      store.set('btrfs-lab:form:fio', bad);
      expect(loadJson('form:fio', {}, isStringRecord)).toEqual({});
      expect(store.get('btrfs-lab:form:fio')).toBe(bad);
    }
    for (const bad of ['null', '42', '{}', '["1"]']) {
      store.set('btrfs-lab:pred:x:0', bad);
      expect(loadJson('pred:x:0', '', isString)).toBe('');
    }
  });
  it('works without storage at all', () => {
    delete (globalThis as { localStorage?: unknown }).localStorage;
    expect(loadJson('form:fio', { a: '1' }, isStringRecord)).toEqual({ a: '1' });
    expect(() => saveJson('form:fio', {})).not.toThrow();
  });
});
