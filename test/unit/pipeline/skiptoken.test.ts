/**
 * `$skiptoken`s: sealed and opened only for the read they were made for; anything edited, cut,
 * moved to another read or sealed with another secret is BAD_SKIPTOKEN. And the read pipeline's
 * side: a continued read is compiled once per query (the token left out of the cache key), its
 * position bound in as parameters.
 */
import { createCipheriv, createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { ApiError } from '../../../src/errors.js';
import { compileRead, continueAt, withoutToken } from '../../../src/pipeline/read.js';
import {
  bindingOf,
  POSITION_BYTES,
  type Position,
  Skiptokens,
} from '../../../src/pipeline/skiptoken.js';
import { parseReadOptions } from '../../../src/query/options.js';
import { SKIP_SLOT, seekSlot } from '../../../src/sql/compile-seek.js';
import { order } from '../fixtures/schema.js';

const SECRET = 'a'.repeat(32);
const tokens = new Skiptokens(SECRET);
const BINDING = bindingOf('order', { $filter: 'id gt 5', $orderby: 'select' }, 'sig');
const POSITION: Position = { skip: 0, after: ['O’Brien', '9007199254740993'] };

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return `${error.status} ${error.code}`;
    throw error;
  }
  return 'accepted';
}

describe('Skiptokens', () => {
  test('a token opens for its own read, with its position exactly', () => {
    const token = tokens.seal(BINDING, POSITION);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(tokens.open(BINDING, token)).toEqual(POSITION);
    expect(tokens.open(BINDING, tokens.seal(BINDING, { skip: 40, after: null }))).toEqual({
      skip: 40,
      after: null,
    });
  });

  test('the same position of the same read gives the same token; another position another', () => {
    expect(tokens.seal(BINDING, POSITION)).toBe(tokens.seal(BINDING, POSITION));
    expect(tokens.seal(BINDING, POSITION)).not.toBe(tokens.seal(BINDING, { ...POSITION, skip: 1 }));
  });

  test('a kept token is the one sealed afresh, for short and long reads alike', () => {
    const fresh = tokens.seal(BINDING, POSITION);
    expect(tokens.seal(BINDING, POSITION, true)).toBe(fresh);
    expect(tokens.seal(BINDING, POSITION, true)).toBe(fresh);
    const long = bindingOf('order', { $filter: `id gt ${'9'.repeat(2000)}` }, 'sig');
    const token = tokens.seal(long, POSITION, true);
    expect(tokens.open(long, token)).toEqual(POSITION);
    expect(refusal(() => tokens.open(BINDING, token))).toBe('400 BAD_SKIPTOKEN');
  });

  test('the values cannot be read from the token (a hidden primary key stays hidden)', () => {
    const token = tokens.seal(BINDING, { skip: 0, after: ['987654321'] });
    expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain('987654321');
    expect(token).not.toContain('987654321');
  });

  test('a token’s length tells nothing of the values: one length for every common position', () => {
    const positions: Position[] = [
      { skip: 0, after: [5] },
      { skip: 0, after: [1234567890123] },
      { skip: 0, after: ['18446744073709551615'] },
      { skip: 0, after: ['a'] },
      { skip: 0, after: ['O’Brien—'.repeat(6)] },
      { skip: 0, after: [null, '2038-01-19 03:14:07.000001', '18446744073709551615'] },
      { skip: 9007199254740991, after: null },
      { skip: 0, after: null },
      POSITION,
    ];
    const lengths = positions.map((position) => tokens.seal(BINDING, position).length);
    expect(lengths).toEqual(positions.map(() => 210));
    for (const position of positions) {
      expect(tokens.open(BINDING, tokens.seal(BINDING, position))).toEqual(position);
    }
  });

  test('a longer position (long string keys) grows by powers of two of POSITION_BYTES', () => {
    const length = (chars: number) =>
      tokens.seal(BINDING, { skip: 0, after: ['x'.repeat(chars)] }).length;
    // `[0,["…"]]` is 8 bytes around the string.
    expect(length(POSITION_BYTES - 8)).toBe(210);
    expect(length(POSITION_BYTES - 7)).toBe(length(2 * POSITION_BYTES - 8));
    expect(length(2 * POSITION_BYTES - 7)).toBe(length(4 * POSITION_BYTES - 8));
    expect([length(POSITION_BYTES - 7), length(2 * POSITION_BYTES - 7)]).toEqual([380, 722]);
    const long = { skip: 3, after: ['ü'.repeat(300), 7] };
    expect(tokens.open(BINDING, tokens.seal(BINDING, long))).toEqual(long);
  });

  test('a token sealed before positions were padded still opens', () => {
    // The same cipher over the bare `[0,[5]]`, as tokens were made before.
    const key = (purpose: string) => createHmac('sha256', SECRET).update(purpose).digest();
    const payload = Buffer.from('[0,[5]]');
    const iv = Buffer.alloc(12, 7);
    const cipher = createCipheriv('aes-256-gcm', key('tablegate $skiptoken cipher'), iv);
    cipher.setAAD(Buffer.from(BINDING));
    const body = Buffer.concat([cipher.update(payload), cipher.final()]);
    const token = Buffer.concat([Buffer.of(1), iv, body, cipher.getAuthTag()]).toString(
      'base64url',
    );
    expect(token).toHaveLength(48);
    expect(tokens.open(BINDING, token)).toEqual({ skip: 0, after: [5] });
  });

  test.each<[string, (token: string) => [string, string]]>([
    [
      'every single character changed',
      (t) => [BINDING, `${t.slice(0, 20)}${t[20] === 'A' ? 'B' : 'A'}${t.slice(21)}`],
    ],
    ['cut short', (t) => [BINDING, t.slice(0, -4)]],
    ['only its first bytes', (t) => [BINDING, t.slice(0, 10)]],
    ['longer', (t) => [BINDING, `${t}AAAA`]],
    ['not base64url', () => [BINDING, 'not a token!']],
    ['standard base64 characters', (t) => [BINDING, `${t.slice(0, -1)}+`]],
    ['empty', () => [BINDING, '']],
    [
      'another table',
      (t) => [bindingOf('orders', { $filter: 'id gt 5', $orderby: 'select' }, 'sig'), t],
    ],
    [
      'another $filter',
      (t) => [bindingOf('order', { $filter: 'id gt 6', $orderby: 'select' }, 'sig'), t],
    ],
    ['no $filter', (t) => [bindingOf('order', { $orderby: 'select' }, 'sig'), t]],
    [
      'another $orderby',
      (t) => [bindingOf('order', { $filter: 'id gt 5', $orderby: 'select desc' }, 'sig'), t],
    ],
    [
      'a $select',
      (t) => [
        bindingOf('order', { $filter: 'id gt 5', $orderby: 'select', $select: 'id' }, 'sig'),
        t,
      ],
    ],
    [
      'an $expand',
      (t) => [
        bindingOf('order', { $filter: 'id gt 5', $orderby: 'select', $expand: 'x' }, 'sig'),
        t,
      ],
    ],
    [
      'other sort key types',
      (t) => [bindingOf('order', { $filter: 'id gt 5', $orderby: 'select' }, 'sig2'), t],
    ],
  ])('refused: %s', (_name, change) => {
    const token = tokens.seal(BINDING, POSITION);
    const [binding, changed] = change(token);
    expect(refusal(() => tokens.open(binding, changed))).toBe('400 BAD_SKIPTOKEN');
  });

  test('every one-character edit anywhere is refused, to every other character', () => {
    const token = tokens.seal(BINDING, POSITION);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = 0; i < token.length; i++) {
      for (const c of alphabet) {
        if (c === token[i]) continue;
        const edited = `${token.slice(0, i)}${c}${token.slice(i + 1)}`;
        expect(refusal(() => tokens.open(BINDING, edited))).toBe('400 BAD_SKIPTOKEN');
      }
    }
  });

  test('the binding tells absent, empty and shifted options apart', () => {
    const a = bindingOf('t', { $filter: 'x' }, '');
    expect(
      new Set([
        a,
        bindingOf('t', { $filter: '' }, ''),
        bindingOf('t', {}, ''),
        bindingOf('t', { $orderby: 'x' }, ''),
        bindingOf('t|1:x', {}, ''),
      ]).size,
    ).toBe(5);
  });

  test('another gateway with the same secret opens it; one with another secret does not', () => {
    const token = tokens.seal(BINDING, POSITION);
    expect(new Skiptokens(SECRET).open(BINDING, token)).toEqual(POSITION);
    expect(refusal(() => new Skiptokens('b'.repeat(32)).open(BINDING, token))).toBe(
      '400 BAD_SKIPTOKEN',
    );
  });

  test('a secret shorter than 32 bytes is refused', () => {
    expect(() => new Skiptokens('short')).toThrow('at least 32 bytes');
  });

  test('open mode keeps a secret in the state directory: the same after a restart', async () => {
    const stateDir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-skiptoken-'));
    try {
      const config = { mode: 'open', jwtSecret: null, skiptokenSecret: null, stateDir } as const;
      const first = await Skiptokens.open(config);
      const token = first.seal(BINDING, POSITION);
      expect((await Skiptokens.open(config)).open(BINDING, token)).toEqual(POSITION);
      // --skiptoken-secret wins over it; auth mode's --jwt-secret is used when given.
      const given = await Skiptokens.open({ ...config, skiptokenSecret: SECRET });
      expect(given.open(BINDING, tokens.seal(BINDING, POSITION))).toEqual(POSITION);
      const auth = await Skiptokens.open({ ...config, mode: 'auth', jwtSecret: SECRET });
      expect(auth.open(BINDING, tokens.seal(BINDING, POSITION))).toEqual(POSITION);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});

describe('the read pipeline’s side', () => {
  test('withoutToken leaves the token out of the cache key, in either spelling of its name', () => {
    expect(withoutToken('$top=5&$skiptoken=abc')).toBe('$top=5&$skiptoken=');
    expect(withoutToken('$skiptoken=abc&$top=5')).toBe('$skiptoken=&$top=5');
    expect(withoutToken('$top=5&%24skiptoken=abc&x=1')).toBe('$top=5&%24skiptoken=&x=1');
    expect(withoutToken('$top=5&$skiptoken')).toBeNull();
    expect(withoutToken('$top=5&%24skipto%6Ben=abc')).toBeNull();
    expect(withoutToken(null)).toBeNull();
  });

  test('every token of a query shares one compiled read; continueAt binds its position', () => {
    const query = { $select: 'id', $orderby: 'select', $top: '2', $skiptoken: '' };
    const read = compileRead(order, query, null);
    expect(read.select.params).toEqual([seekSlot(0), seekSlot(0), seekSlot(1), '2', SKIP_SLOT]);
    const continued = continueAt(read, { skip: 1, after: ['b', '7'] });
    expect(continued.select.sql).toBe(read.select.sql);
    expect(continued.select.params.slice(0, 3)).toEqual(['b', 'b', expect.anything()]);
    expect(continued.select.params.slice(3)).toEqual(['2', '1']);
    expect(continued.page?.skip).toBe(1);
  });

  test('a position that does not fit the read is refused like a forged token', () => {
    const read = compileRead(order, { $select: 'id', $top: '2', $skiptoken: '' }, null);
    expect(refusal(() => continueAt(read, { skip: 0, after: null }))).toBe('400 BAD_SKIPTOKEN');
    expect(refusal(() => continueAt(read, { skip: 0, after: ['1', '2'] }))).toBe(
      '400 BAD_SKIPTOKEN',
    );
    expect(refusal(() => continueAt(read, { skip: 0, after: ['x'] }))).toBe('400 BAD_SKIPTOKEN');
  });

  test('$skiptoken with $skip is a 400 before any token is looked at', () => {
    expect(refusal(() => parseReadOptions({ $skip: '5', $skiptoken: 'x' }))).toBe(
      '400 INVALID_QUERY',
    );
    expect(parseReadOptions({ $skiptoken: 'x' }).continues).toBe(true);
    expect(parseReadOptions({}).continues).toBe(false);
  });
});
