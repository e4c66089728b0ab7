/**
 * `may` (pipeline/decide.ts): the one "may this role do X" every front door asks, Policy.decide's
 * answer under a policy and yes without one. tableFor and routinesFor, which need the schema
 * cache, are exercised over HTTP and MCP by test/integration/policy*.test.ts and mcp.test.ts.
 */
import { describe, expect, test } from '@jest/globals';
import { may } from '../../../src/pipeline/decide.js';
import { validatePolicy } from '../../../src/policy/policy.js';
import type { Access } from '../../../src/policy/views.js';
import { balance } from '../fixtures/routines.js';
import { column, table } from '../fixtures/schema.js';

const items = table('items', [column('id')], ['id']);
const policy = validatePolicy(
  {
    roles: {
      reader: { tables: { items: { read: true } }, routines: { balance: true } },
      editor: { tables: { items: { read: true, update: true } } },
    },
  },
  new Map([['items', items]]),
  'policy',
  { procedures: new Map(), functions: new Map([[balance.name, balance]]) },
);
const as = (role: string): Access => ({ policy, role, user: null });

describe('may', () => {
  test('without a policy everything is allowed', () => {
    expect(may(null, { kind: 'table', table: 'anything', action: 'delete' })).toBe(true);
    expect(may(null, { kind: 'routine', routine: 'anything' })).toBe(true);
  });

  test.each([
    ['reader', 'read', true],
    ['reader', 'update', false],
    ['editor', 'update', true],
    ['editor', 'delete', false],
    ['nobody', 'read', false],
  ] as const)('%s may %s items: %s', (role, action, expected) => {
    expect(may(as(role), { kind: 'table', table: 'items', action })).toBe(expected);
  });

  test('routines by name', () => {
    expect(may(as('reader'), { kind: 'routine', routine: 'balance' })).toBe(true);
    expect(may(as('editor'), { kind: 'routine', routine: 'balance' })).toBe(false);
  });
});
