/**
 * Fuzzing the read stages: random text and random mutations of valid filters into
 * parseFilter raise only ApiErrors with a 4xx status, and a syntax error always says where
 * (`at position N`, N within the text); the whole pipeline (options → plan → SQL) on a schema
 * fixture never throws anything else. The filters include the date/time literals and functions
 * of docs/filters.md. Random valid ASTs, spelled out as text, parse back to the
 * same tree and compile to SQL with exactly one `?` per parameter. Under a policy
 * (docs/policies.md) the caller's filter stays one term ANDed with the policy's where, and a hidden
 * column is a 4xx. Generated `$apply` expressions compile with one `?` per parameter, and mutations
 * of them are compiled or refused with a 4xx that says where.
 * The seed of a failing run is printed by fast-check; FUZZ_SEED=<n> replays it.
 */
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { ApiError } from '../../src/errors.js';
import { compileRead as compileReadOptions } from '../../src/pipeline/read.js';
import { planRead } from '../../src/plan/read-plan.js';
import { validatePolicy } from '../../src/policy/policy.js';
import { viewerFor } from '../../src/policy/views.js';
import { parseFilter } from '../../src/query/filter-parser.js';
import { parseReadOptions } from '../../src/query/options.js';
import { compileCount, compileSelect } from '../../src/sql/compile-read.js';
import {
  applyArb,
  filterArb,
  filterText,
  optionsArb,
  placeholderCount,
  spellingArb,
  withoutPositions,
} from '../helpers/filter-arbitraries.js';
import { fuzzSeed } from '../helpers/fuzz-seed.js';
import { wide } from '../unit/fixtures/schema.js';

const seed = fuzzSeed();
const params = (numRuns: number) => ({ numRuns, seed });

const validFilter = fc
  .tuple(filterArb(wide), spellingArb)
  .map(([ast, spelling]) => ({ ast, text: filterText(ast, spelling) }));

/** Runs `fn`; anything it throws must be an ApiError with a 4xx status. Returns the error, if any. */
function onlyApiErrors(fn: () => unknown): ApiError | null {
  try {
    fn();
    return null;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    expect(error.status).toBeGreaterThanOrEqual(400);
    expect(error.status).toBeLessThan(500);
    return error;
  }
}

/** A syntax error names a position inside the text (1-based, code points; end counts). */
function expectPositioned(error: ApiError | null, text: string): void {
  if (error?.code !== 'FILTER_SYNTAX') return;
  const match = /at position (\d+)/.exec(error.message);
  expect(match).not.toBeNull();
  const position = Number(match?.[1]);
  expect(position).toBeGreaterThanOrEqual(1);
  expect(position).toBeLessThanOrEqual(Array.from(text).length + 1);
}

const TOKENS = [
  ' ',
  '(',
  ')',
  ',',
  "'",
  "''",
  '-',
  '.',
  'e',
  '1',
  'eq',
  'and',
  'or',
  'not',
  'in',
  'null',
  'true',
  'contains(',
  'tolower(',
  'year(',
  'date(',
  '2024-01-03',
  '2024-02-30',
  'T',
  'Z',
  ':',
  '+01:00',
  '12:30:00',
  '24:00:00',
  '.123',
  'day',
  'at',
  'id',
  'größe',
  '日',
  '🎉',
  '\u0000',
  '\\',
  '`',
  '"',
  ';',
  '--',
  '/*',
  '%',
  '?',
];

/** `chars` with `remove` characters at `at` replaced by `insert` (a copy). */
function spliced(
  chars: readonly string[],
  at: number,
  remove: number,
  insert: readonly string[] = [],
) {
  const copy = [...chars];
  copy.splice(at, remove, ...insert);
  return copy;
}

/** One edit of a text: delete, insert, duplicate, swap, truncate. */
const mutation = fc.oneof(
  fc.tuple(fc.nat(), fc.nat(8)).map(
    ([at, length]) =>
      (chars: string[]) =>
        spliced(chars, at % (chars.length + 1), length),
  ),
  fc.tuple(fc.nat(), fc.oneof(fc.constantFrom(...TOKENS), fc.string({ maxLength: 3 }))).map(
    ([at, insert]) =>
      (chars: string[]) =>
        spliced(chars, at % (chars.length + 1), 0, Array.from(insert)),
  ),
  fc.tuple(fc.nat(), fc.nat(12)).map(([at, length]) => (chars: string[]) => {
    const start = at % (chars.length + 1);
    return spliced(chars, start, 0, chars.slice(start, start + length));
  }),
  fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => (chars: string[]) => {
    if (chars.length < 2) return chars;
    const copy = [...chars];
    const i = a % chars.length;
    const j = b % chars.length;
    [copy[i], copy[j]] = [copy[j] as string, copy[i] as string];
    return copy;
  }),
  fc.nat().map((at) => (chars: string[]) => chars.slice(0, at % (chars.length + 1))),
);

const mutatedFilter = fc
  .tuple(validFilter, fc.array(mutation, { minLength: 1, maxLength: 4 }))
  .map(([{ text }, edits]) =>
    edits.reduce((chars, edit) => edit(chars), Array.from(text)).join(''),
  );

/** Strings built from the filter's own alphabet, so they get past the lexer more often. */
const tokenSoup = fc
  .array(fc.constantFrom(...TOKENS), { maxLength: 40 })
  .map((parts) => parts.join(' '));

describe('parseFilter under fuzzing', () => {
  test('random text: an AST or a 4xx ApiError; syntax errors say where', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.string({ unit: 'binary', maxLength: 100 }),
          tokenSoup,
        ),
        (text) => {
          expectPositioned(
            onlyApiErrors(() => parseFilter(text)),
            text,
          );
        },
      ),
      params(3000),
    );
  });

  test('mutations of valid filters: an AST or a 4xx ApiError; syntax errors say where', () => {
    fc.assert(
      fc.property(mutatedFilter, (text) => {
        expectPositioned(
          onlyApiErrors(() => parseFilter(text)),
          text,
        );
      }),
      params(3000),
    );
  });

  test('valid filters spelled out parse back to the same tree', () => {
    fc.assert(
      fc.property(validFilter, ({ ast, text }) => {
        expect(withoutPositions(parseFilter(text))).toEqual(ast);
      }),
      params(2000),
    );
  });
});

describe('the read pipeline under fuzzing (options → plan → SQL, schema fixture `wide`)', () => {
  test('valid filters and options compile to SQL with one ? per parameter', () => {
    fc.assert(
      fc.property(validFilter, optionsArb(wide), ({ text }, options) => {
        const plan = planRead(parseReadOptions({ ...options, $filter: text }), wide);
        for (const { sql, params: values } of [compileSelect(plan), compileCount(plan)]) {
          expect(placeholderCount(sql)).toBe(values.length);
          // Only what mysql2 binds as a plain value: strings, numbers, null.
          expect(
            values.filter((v) => v !== null && !['string', 'number'].includes(typeof v)),
          ).toEqual([]);
        }
      }),
      params(2000),
    );
  });

  test('mutated filters and random option values: compiled, or a 4xx ApiError', () => {
    const optionValue = fc.oneof(fc.string({ maxLength: 30 }), tokenSoup);
    const query = fc.record(
      {
        $filter: fc.oneof(mutatedFilter, optionValue),
        $select: optionValue,
        $orderby: optionValue,
        $top: optionValue,
        $skip: optionValue,
        $count: optionValue,
        $other: optionValue,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(query, (q) => {
        onlyApiErrors(() => {
          const plan = planRead(parseReadOptions(q), wide);
          for (const { sql, params: values } of [compileSelect(plan), compileCount(plan)]) {
            expect(placeholderCount(sql)).toBe(values.length);
          }
        });
      }),
      params(3000),
    );
  });
});

describe('the read pipeline under a policy', () => {
  const policy = validatePolicy(
    {
      roles: {
        r: {
          tables: {
            wide: {
              read: {
                where: '(id le @user.id or note eq null) and not (shipped eq true)',
                columns: ['id', 'price', 'note', 'shipped', 'day', 'at'],
              },
            },
          },
        },
      },
    },
    new Map([['wide', wide]]),
  );
  const access = { policy, role: 'r', user: { id: '5', email: 'r@x.org', role: 'r' } };
  const COUNT = 'SELECT COUNT(*) FROM `wide`';
  const policyOnly = compileCount(planRead(parseReadOptions({}), wide, viewerFor(access)));
  const policyWhere = policyOnly.sql.slice(`${COUNT} WHERE `.length);

  test("the caller's filter is one term ANDed with the where; a hidden column is a 4xx", () => {
    expect(policyOnly.sql.startsWith(`${COUNT} WHERE `)).toBe(true);
    let guarded = 0;
    fc.assert(
      fc.property(validFilter, optionsArb(wide), ({ text }, options) => {
        const request = parseReadOptions({ ...options, $filter: text });
        const plan = planRead(request, wide);
        let restricted: ReturnType<typeof planRead> | null = null;
        const error = onlyApiErrors(() => {
          restricted = planRead(request, wide, viewerFor(access));
        });
        if (error !== null) {
          expect(error.code).toBe('UNKNOWN_COLUMN');
          return;
        }
        guarded += 1;
        const mine = compileCount(plan);
        const both = compileCount(restricted as unknown as typeof plan);
        const callerWhere = mine.sql.slice(`${COUNT} WHERE `.length);
        expect(both).toEqual({
          sql: `${COUNT} WHERE (${callerWhere} AND ${policyWhere})`,
          params: [...mine.params, ...policyOnly.params],
        });
        const read = compileSelect(restricted as unknown as typeof plan);
        expect(placeholderCount(read.sql)).toBe(read.params.length);
      }),
      params(2000),
    );
    // Enough filters only name granted columns for the property to mean something.
    expect(guarded).toBeGreaterThan(100);
  });
});

describe('$apply under fuzzing (options → plan → SQL, schema fixture `wide`)', () => {
  const generated = applyArb(wide);

  test('generated expressions compile to SQL with one ? per parameter', () => {
    fc.assert(
      fc.property(generated, ({ query }) => {
        const read = compileReadOptions(wide, query, null);
        for (const compiled of [read.select, ...(read.count === null ? [] : [read.count])]) {
          expect(placeholderCount(compiled.sql)).toBe(compiled.params.length);
        }
      }),
      params(1000),
    );
  });

  test('mutated expressions: compiled, or a 4xx ApiError; a grammar error says where', () => {
    const mutated = fc.tuple(generated, fc.array(mutation, { minLength: 1, maxLength: 4 })).map(
      ([{ query }, edits]): Record<string, string> => ({
        ...query,
        $apply: edits.reduce((chars, edit) => edit(chars), Array.from(query.$apply ?? '')).join(''),
      }),
    );
    fc.assert(
      fc.property(mutated, (query) => {
        const error = onlyApiErrors(() => compileReadOptions(wide, query, null));
        if (error?.code !== 'APPLY_SYNTAX' && error?.code !== 'FILTER_SYNTAX') return;
        const match = /^Invalid \$(apply|filter) at position (\d+)/.exec(error.message);
        if (match === null) return; // a fatal lexer message, or one without a place
        const text = match[1] === 'apply' ? query.$apply : query.$filter;
        expect(Number(match[2])).toBeLessThanOrEqual(Array.from(text ?? '').length + 1);
      }),
      params(1000),
    );
  });
});
