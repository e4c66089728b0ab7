/**
 * The shape cache under fuzzing (pipeline/read-shape.ts): for random filters with numbers of
 * every form, under policies, for invalid queries and across table objects, a read served from a
 * shape's template is exactly what the pipeline compiles afresh. The seed of a failing run is
 * printed by fast-check; FUZZ_SEED replays it.
 */
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { ShapeCache } from '../../src/pipeline/read-shape.js';
import { fuzzSeed } from '../helpers/fuzz-seed.js';
import {
  as,
  fresh,
  outcome,
  ROLES,
  reread,
  SENTINEL_0,
  shop,
  viaShapes,
} from '../unit/fixtures/read-shape.js';

const seed = fuzzSeed();

describe('random filters: the shape path gives what the pipeline compiles afresh', () => {
  /** A number slot: a hole (its digits change per query), fixed text, or any number per query. */
  type Slot = { readonly slot: 'hole' } | { readonly slot: 'wild' } | { readonly fixed: string };
  type Part = string | Slot;

  const holeText = fc.oneof(
    fc.constantFrom('0', '00', '007', '1', '999999999999999', '000000000000000', `${SENTINEL_0}`),
    fc.nat(1_000_000).map(String),
    fc.stringMatching(/^[0-9]{1,15}$/),
    fc.stringMatching(/^[0-9]{15}$/),
  );
  const oddNumber = fc.oneof(
    fc.constantFrom('-5', '-0', '1.5', '0.0', '1e3', '1E+3', '2.5e-3', '-007', '1e400'),
    fc.constantFrom('1234567890123456', '9007199254740993', '12345678901234567890'),
    fc.stringMatching(/^-?[0-9]{1,20}(\.[0-9]{1,4})?$/),
  );
  const slot: fc.Arbitrary<Slot> = fc.oneof(
    { weight: 4, arbitrary: fc.constant({ slot: 'hole' as const }) },
    { weight: 1, arbitrary: fc.constant({ slot: 'wild' as const }) },
    { weight: 2, arbitrary: fc.oneof(holeText, oddNumber).map((fixed) => ({ fixed })) },
  );
  const space = fc.constantFrom(' ', '  ', '\t', '\n', '\r\n');
  const stringLiteral = fc
    .array(fc.constantFrom('1', '23', "''", ' ', '(', ',', ')', 'a', 'é', '-'), { maxLength: 5 })
    .map((parts) => `'${parts.join('')}'`);
  const op = fc.constantFrom('eq', 'ne', 'lt', 'le', 'gt', 'GE');
  const numeric = fc.constantFrom('id', 'qty', 'price', 'year(day)', 'length(name)', 'month(at)');

  /** A condition as parts; some are invalid (a type error, an unknown column, bad syntax). */
  const leaf: fc.Arbitrary<Part[]> = fc.oneof(
    { weight: 5, arbitrary: fc.tuple(numeric, space, op, space, slot) },
    fc.tuple(slot, space, op, space, numeric),
    fc.tuple(fc.constantFrom('name', 'tolower(name)'), space, op, space, stringLiteral),
    fc.tuple(fc.constant('name eq'), space, slot),
    fc.tuple(slot, fc.constant(' eq '), slot),
    fc.tuple(fc.constantFrom('day ge 2024-01-05', 'at lt 2024-01-03T10:00:00 02:00')),
    fc
      .tuple(
        fc.constantFrom('id', 'qty'),
        fc.constantFrom(' in (', ' IN(', ' in ( '),
        fc.array(fc.oneof(slot, fc.constant('null')), { minLength: 1, maxLength: 4 }),
        fc.constantFrom(',', ', ', ' ,'),
        fc.constantFrom(')', ' )'),
      )
      .map(([column, open, items, comma, close]): Part[] => [
        column,
        open,
        ...items.flatMap((item, i): Part[] => (i === 0 ? [item] : [comma, item])),
        close,
      ]),
    fc.tuple(fc.constant('contains(name,'), space, stringLiteral, fc.constant(')')),
    fc.tuple(
      fc.constantFrom(
        'year(id) eq ',
        'nope eq ',
        'id lt null or id eq ',
        'day eq 2024-13-01 or id eq ',
      ),
      slot,
    ),
    fc.tuple(fc.constant('id eq '), slot, space, slot),
    fc.tuple(fc.constant("name eq 'x"), slot),
  );
  const { filter } = fc.letrec<{ filter: Part[] }>((tie) => ({
    filter: fc.oneof(
      { depthSize: 'small', maxDepth: 3 },
      { weight: 3, arbitrary: leaf },
      fc
        .tuple(tie('filter'), space, fc.constantFrom('and', 'OR'), space, tie('filter'))
        .map((parts) => parts.flat()),
      fc
        .tuple(fc.constantFrom('(', '( '), tie('filter'), fc.constantFrom(')', ' )'))
        .map((parts) => parts.flat()),
      fc.tuple(fc.constant('not ('), tie('filter'), fc.constant(')')).map((parts) => parts.flat()),
    ),
  }));
  const options = fc.record(
    {
      $select: fc.constantFrom('*', 'id,name', 'name,price'),
      $top: fc.constantFrom('0', '5', '200'),
      $count: fc.constantFrom('true', 'false'),
      $orderby: fc.constantFrom('id desc', 'qty'),
      _: fc.constant('1'),
    },
    { requiredKeys: [] },
  );
  const access = fc.oneof(
    { weight: 4, arbitrary: fc.constant(null) },
    fc.constantFrom(...ROLES).map((role) => as(role)),
  );
  const QUERIES = 8;
  const holeCount = (parts: readonly Part[]) =>
    parts.filter((p) => typeof p !== 'string' && !('fixed' in p)).length;
  const skeleton = fc
    .record({ filter, options, access, filterFirst: fc.boolean(), reread: fc.boolean() })
    .chain((s) =>
      fc.tuple(
        fc.constant(s),
        fc.array(fc.array(fc.oneof(holeText, oddNumber), { minLength: holeCount(s.filter) }), {
          minLength: QUERIES,
          maxLength: QUERIES,
        }),
        fc.array(fc.array(holeText, { minLength: holeCount(s.filter) }), {
          minLength: QUERIES,
          maxLength: QUERIES,
        }),
      ),
    );

  test('thousands of queries: the same reads and the same errors', () => {
    const shapes = new ShapeCache();
    let queries = 0;
    let hits = 0;
    let refused = 0;
    fc.assert(
      fc.property(skeleton, ([s, wilds, holes]) => {
        const on = s.reread ? reread : shop;
        for (let q = 0; q < QUERIES; q++) {
          let w = 0;
          let h = 0;
          const text = s.filter
            .map((p) => {
              if (typeof p === 'string') return p;
              if ('fixed' in p) return p.fixed;
              return p.slot === 'hole' ? (holes[q]?.[h++] as string) : (wilds[q]?.[w++] as string);
            })
            .join('');
          const query = s.filterFirst
            ? { $filter: text, ...s.options }
            : { ...s.options, $filter: text };
          const served = outcome(() => {
            const { read, hit } = viaShapes(shapes, on, query, s.access);
            if (hit) hits++;
            return read;
          });
          const expected = outcome(() => fresh(on, query, s.access));
          expect({ query, served }).toEqual({ query, served: expected });
          queries++;
          if ('error' in expected) refused++;
        }
      }),
      { numRuns: 1000, seed },
    );
    // The comparison must have met both templates and refusals, not only fresh plans.
    expect(hits).toBeGreaterThan(queries / 5);
    expect(refused).toBeGreaterThan(queries / 20);
  });
});
