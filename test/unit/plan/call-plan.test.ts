import { describe, expect, test } from '@jest/globals';
import { ApiError } from '../../../src/errors.js';
import { planCallBody, planCallQuery } from '../../../src/plan/call-plan.js';
import { balance, fn, parameter, placeOrder, report } from '../fixtures/routines.js';

/** The error a plan throws, as its answer body. */
function refusal(plan: () => unknown): { status: number; code: string; message: string } {
  try {
    plan();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { status: error.status, code: error.code, message: error.message };
  }
  throw new Error('planned without an error');
}

describe('planCallBody', () => {
  test('one value per IN and INOUT parameter, in declaration order, coerced as write values', () => {
    expect(planCallBody(placeOrder, { stock: '12', note: null, customer: 7 }).inputs).toEqual([
      7,
      null,
      12,
    ]);
  });

  test('no parameters: no body, or an empty object', () => {
    expect(planCallBody(report, undefined).inputs).toEqual([]);
    expect(planCallBody(report, {}).inputs).toEqual([]);
  });

  test.each([
    [
      [1],
      'INVALID_BODY',
      "The body must be a JSON object of the routine's parameters by name, not an array",
    ],
    [
      null,
      'INVALID_BODY',
      "The body must be a JSON object of the routine's parameters by name, not null",
    ],
    [
      3,
      'INVALID_BODY',
      "The body must be a JSON object of the routine's parameters by name, not a number",
    ],
    [
      { customer: 1, note: 'n' },
      'MISSING_PARAMETER',
      "Parameter 'stock' of routine 'place_order' is missing: every IN and INOUT parameter is required (send null for NULL)",
    ],
    [
      { customer: 1, note: 'n', stock: 1, Customer: 2 },
      'UNKNOWN_PARAMETER',
      "Routine 'place_order' has no parameter 'Customer' to send",
    ],
    [
      { customer: 1, note: 'n', stock: 1, total: 2 },
      'UNKNOWN_PARAMETER',
      `Routine 'place_order' has no parameter 'total' to send: 'total' is an OUT parameter, whose value comes back in "out"`,
    ],
    [
      { customer: 1.5, note: 'n', stock: 1 },
      'INVALID_VALUE',
      "Parameter 'customer' takes whole numbers; 1.5 is not one",
    ],
    [
      { customer: 1, note: { a: 1 }, stock: 1 },
      'INVALID_VALUE',
      "Parameter 'note' takes a single value, not an object; objects and arrays go only into JSON columns",
    ],
    [
      { customer: '7 or 1=1', note: 'n', stock: 1 },
      'INVALID_VALUE',
      "Parameter 'customer' takes a number; '7 or 1=1' is not one",
    ],
  ])('%j → %s', (body, code, message) => {
    const answer = refusal(() => planCallBody(placeOrder, body));
    expect(answer).toEqual({ status: 400, code, message });
  });

  test('an own key only: a __proto__ key is unknown, not a prototype', () => {
    const body = JSON.parse(
      '{"__proto__": {"customer": 1}, "customer": 1, "note": "n", "stock": 1}',
    );
    expect(refusal(() => planCallBody(placeOrder, body))).toMatchObject({
      code: 'UNKNOWN_PARAMETER',
    });
  });
});

describe('planCallQuery', () => {
  test('values as text, as a JSON string would carry them', () => {
    expect(planCallQuery(balance, { day: '2024-02-29', customer: '42' }).inputs).toEqual([
      42,
      '2024-02-29',
    ]);
  });

  test('a parameter given twice is refused, not the last one taken', () => {
    expect(refusal(() => planCallQuery(balance, { customer: ['1', '2'], day: 'd' }))).toEqual({
      status: 400,
      code: 'INVALID_ARGUMENTS',
      message: "Parameter 'customer' is given more than once",
    });
  });

  test('unknown and missing as for a body', () => {
    expect(refusal(() => planCallQuery(balance, { customer: '1' })).code).toBe('MISSING_PARAMETER');
    expect(refusal(() => planCallQuery(balance, { customer: '1', day: 'd', x: '' })).code).toBe(
      'UNKNOWN_PARAMETER',
    );
  });

  test("a JSON parameter's text is JSON", () => {
    const takesJson = fn('takes_json', {}, [
      parameter('doc', 'in', { dataType: 'json', kind: 'json' }),
    ]);
    expect(planCallQuery(takesJson, { doc: '{"a": [1, 2]}' }).inputs).toEqual(['{"a":[1,2]}']);
    expect(refusal(() => planCallQuery(takesJson, { doc: '{a' }))).toEqual({
      status: 400,
      code: 'INVALID_VALUE',
      message: "Parameter 'doc' takes JSON text, and this is not JSON",
    });
  });
});
