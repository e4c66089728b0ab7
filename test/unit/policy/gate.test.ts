/**
 * What a request asks the policy, by the gate its route declares (http/route-gate.ts), and what
 * a role may do with it: the decisions behind 404, 403 and anonymous access (docs/policies.md).
 */
import { describe, expect, test } from '@jest/globals';
import { mayDo, type Requested } from '../../../src/http/policy-gate.js';
import { type RouteGate, requestedOf } from '../../../src/http/route-gate.js';
import { validatePolicy } from '../../../src/policy/policy.js';
import { balance, placeOrder } from '../fixtures/routines.js';
import { column, table } from '../fixtures/schema.js';

const items = table('items', [column('id')], ['id']);
const policy = validatePolicy(
  {
    roles: {
      anonymous: { tables: { items: { read: true } }, routines: { balance: true } },
      writer: { tables: { items: { create: true } }, files: { upload: true } },
      editor: {
        tables: { items: { read: true, update: true } },
        files: { download: true },
        routines: { '*': true, balance: false },
      },
      caller: { routines: { place_order: true } },
    },
  },
  new Map([['items', items]]),
  'policy',
  {
    procedures: new Map([[placeOrder.name, placeOrder]]),
    functions: new Map([[balance.name, balance]]),
  },
);

describe('requestedOf', () => {
  test.each<[RouteGate | undefined, unknown, Requested]>([
    [
      { kind: 'table', action: 'read' },
      { table: 'items' },
      { kind: 'table', table: 'items', action: 'read' },
    ],
    [
      { kind: 'table', action: 'create' },
      { table: 'items', action: 'create' },
      { kind: 'table', table: 'items', action: 'create' },
    ],
    [
      { kind: 'table', action: 'update' },
      { table: 'items', action: 'update(id,1)' },
      { kind: 'table', table: 'items', action: 'update' },
    ],
    [
      { kind: 'table', action: 'delete' },
      { table: 'items', action: 'delete(id,1)' },
      { kind: 'table', table: 'items', action: 'delete' },
    ],
    [{ kind: 'files', action: 'upload' }, {}, { kind: 'files', action: 'upload' }],
    [
      { kind: 'files', action: 'download' },
      { '*': 'a.png' },
      { kind: 'files', action: 'download' },
    ],
    [{ kind: 'routine' }, { name: 'balance' }, { kind: 'routine', routine: 'balance' }],
    [{ kind: 'description' }, {}, { kind: 'description' }],
    [{ kind: 'mcp' }, {}, { kind: 'mcp' }],
    [{ kind: 'public' }, {}, { kind: 'other' }],
    [{ kind: 'signed-in' }, {}, { kind: 'other' }],
    // No route matched (the 404): nothing the policy is asked about.
    [undefined, {}, { kind: 'other' }],
  ])('%j with %j → %j', (gate, params, expected) => {
    expect(requestedOf(gate, params)).toEqual(expected);
  });
});

describe('mayDo', () => {
  const read: Requested = { kind: 'table', table: 'items', action: 'read' };
  const create: Requested = { kind: 'table', table: 'items', action: 'create' };
  const update: Requested = { kind: 'table', table: 'items', action: 'update' };
  test.each<[string, Requested, boolean]>([
    ['anonymous', read, true],
    ['anonymous', create, false],
    // A table the role cannot read is invisible, even for an action it was given.
    ['writer', create, false],
    ['editor', update, true],
    ['editor', create, false],
    ['writer', { kind: 'files', action: 'upload' }, true],
    ['writer', { kind: 'files', action: 'download' }, false],
    ['editor', { kind: 'files', action: 'download' }, true],
    ['anonymous', { kind: 'description' }, true],
    ['nobody', { kind: 'description' }, false],
    ['editor', { kind: 'other' }, false],
    ['editor', { kind: 'table', table: 'users_created_by_tablegate', action: 'read' }, false],
    // Routines: by name, or `*`; a named one overrides `*`.
    ['anonymous', { kind: 'routine', routine: 'balance' }, true],
    ['anonymous', { kind: 'routine', routine: 'place_order' }, false],
    ['editor', { kind: 'routine', routine: 'place_order' }, true],
    ['editor', { kind: 'routine', routine: 'balance' }, false],
    ['editor', { kind: 'routine', routine: 'no_such_routine' }, true],
    ['writer', { kind: 'routine', routine: 'balance' }, false],
    ['caller', { kind: 'routine', routine: 'place_order' }, true],
    // Granted only a routine, a role still sees the description.
    ['caller', { kind: 'description' }, true],
  ])('%s may %j: %s', (role, requested, expected) => {
    expect(mayDo(policy, role, requested)).toBe(expected);
  });
});
