/**
 * The policy gate's reading of a request (the route Fastify chose, never the raw URL) and what
 * a role may do with it: the decisions behind 404, 403 and anonymous access (docs/policies.md).
 */
import { describe, expect, test } from '@jest/globals';
import { mayDo, type Requested, requestedAction } from '../../../src/http/policy-gate.js';
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

describe('requestedAction', () => {
  test.each<[string, string | undefined, unknown, Requested]>([
    [
      'GET',
      '/table/:table/read',
      { table: 'items' },
      { kind: 'table', table: 'items', action: 'read' },
    ],
    [
      'HEAD',
      '/table/:table/read',
      { table: 'items' },
      { kind: 'table', table: 'items', action: 'read' },
    ],
    [
      'POST',
      '/table/:table/:action',
      { table: 'items', action: 'create' },
      { kind: 'table', table: 'items', action: 'create' },
    ],
    [
      'PUT',
      '/table/:table/:action',
      { table: 'items', action: 'update(id,1)' },
      { kind: 'table', table: 'items', action: 'update' },
    ],
    [
      'DELETE',
      '/table/:table/:action',
      { table: 'items', action: 'delete(id,1)' },
      { kind: 'table', table: 'items', action: 'delete' },
    ],
    ['POST', '/upload', {}, { kind: 'files', action: 'upload' }],
    ['GET', '/@/*', { '*': 'a.png' }, { kind: 'files', action: 'download' }],
    ['HEAD', '/@/*', { '*': 'a.png' }, { kind: 'files', action: 'download' }],
    ['GET', '/rpc/:name', { name: 'balance' }, { kind: 'routine', routine: 'balance' }],
    ['HEAD', '/rpc/:name', { name: 'balance' }, { kind: 'routine', routine: 'balance' }],
    ['POST', '/rpc/:name', { name: 'place_order' }, { kind: 'routine', routine: 'place_order' }],
    ['PUT', '/rpc/:name', { name: 'place_order' }, { kind: 'other' }],
    ['GET', '/openapi.json', {}, { kind: 'description' }],
    ['GET', '/docs/json', {}, { kind: 'description' }],
    ['POST', '/table/:table/read', { table: 'items' }, { kind: 'other' }],
    ['GET', undefined, {}, { kind: 'other' }],
  ])('%s %s → %j', (method, route, params, expected) => {
    expect(requestedAction(method, route, params)).toEqual(expected);
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
