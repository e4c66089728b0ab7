/**
 * The policy gate's reading of a request (the route Fastify chose, never the raw URL) and what
 * a role may do with it: the decisions behind 404, 403 and anonymous access (CONTRACT §6).
 */
import { describe, expect, test } from '@jest/globals';
import { mayDo, type Requested, requestedAction } from '../../../src/http/policy-gate.js';
import { validatePolicy } from '../../../src/policy/policy.js';
import { column, table } from '../fixtures/schema.js';

const items = table('items', [column('id')], ['id']);
const policy = validatePolicy(
  {
    roles: {
      anonymous: { tables: { items: { read: true } } },
      writer: { tables: { items: { create: true } }, files: { upload: true } },
      editor: { tables: { items: { read: true, update: true } }, files: { download: true } },
    },
  },
  new Map([['items', items]]),
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
  ])('%s may %j: %s', (role, requested, expected) => {
    expect(mayDo(policy, role, requested)).toBe(expected);
  });
});
