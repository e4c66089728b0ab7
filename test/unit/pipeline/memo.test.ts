/**
 * The memo layer (pipeline/memo.ts): a value is made once per key object and handed back as the
 * same object; a null value is kept like any other; another key, even an equal-looking one, is
 * another entry (a schema re-read's new table object never finds the old one's value).
 */
import { describe, expect, test } from '@jest/globals';
import { Memo } from '../../../src/pipeline/memo.js';

describe('Memo', () => {
  test('makes a value once per key and hands back the same object', () => {
    const made: object[] = [];
    const memo = new Memo<{ name: string }, { of: string }>((key) => {
      made.push(key);
      return { of: key.name };
    });
    const key = { name: 'items' };
    const first = memo.of(key);
    expect(first).toEqual({ of: 'items' });
    expect(memo.of(key)).toBe(first);
    expect(made).toEqual([key]);
  });

  test('keeps null as a value', () => {
    let calls = 0;
    const memo = new Memo<object, null>(() => {
      calls++;
      return null;
    });
    const key = {};
    expect(memo.of(key)).toBeNull();
    expect(memo.of(key)).toBeNull();
    expect(calls).toBe(1);
  });

  test('an equal object of a newer schema is another key', () => {
    const memo = new Memo<{ name: string }, { of: string }>((key) => ({ of: key.name }));
    const before = memo.of({ name: 'items' });
    const after = memo.of({ name: 'items' });
    expect(after).toEqual(before);
    expect(after).not.toBe(before);
  });
});
