/** Claim paths and the role a claim gives (auth/claims.ts). */
import { claimAt, roleOf, userIdOf } from '../../../src/auth/claims.js';

const keycloak = {
  sub: 'f1e2',
  realm_access: { roles: ['offline_access', 'customer'] },
  resource_access: { shop: { roles: ['admin'] } },
  'https://example.com/roles': ['editor'],
  'https://example.com/app': { tier: 'gold' },
  'a.b': 'flat',
  a: { b: 'nested' },
};

describe('claimAt', () => {
  test.each<[string, unknown]>([
    ['sub', 'f1e2'],
    ['realm_access.roles', ['offline_access', 'customer']],
    ['resource_access.shop.roles', ['admin']],
    // Auth0's namespaced claims: the whole name with its dots is one key.
    ['https://example.com/roles', ['editor']],
    ['https://example.com/app.tier', 'gold'],
    // A key that holds the dots wins over the path through nested objects.
    ['a.b', 'flat'],
    ['realm_access.missing', undefined],
    ['missing', undefined],
    ['realm_access.roles.length', undefined],
    ['__proto__', undefined],
    ['constructor', undefined],
    ['realm_access.__proto__', undefined],
    ['', undefined],
    ['.', undefined],
  ])('%j → %j', (path, expected) => {
    expect(claimAt(keycloak, path)).toEqual(expected);
  });

  test('never a value from a non-object', () => {
    expect(claimAt(null, 'a')).toBeUndefined();
    expect(claimAt(['x'], '0')).toBeUndefined();
    expect(claimAt('text', 'length')).toBeUndefined();
  });
});

describe('userIdOf', () => {
  test.each<[unknown, string | null]>([
    ['auth0|65f0', 'auth0|65f0'],
    [42, '42'],
    ['', null],
    [1.5, null],
    [2 ** 60, null],
    [null, null],
    [undefined, null],
    [['a'], null],
    [{ id: 'a' }, null],
  ])('%j → %j', (value, expected) => {
    expect(userIdOf(value)).toBe(expected);
  });
});

describe('roleOf', () => {
  const defined = (role: string) => ['customer', 'admin', 'user'].includes(role);
  test.each<[unknown, ((role: string) => boolean) | null, string]>([
    [['offline_access', 'customer', 'admin'], defined, 'customer'],
    [['offline_access', 'uma_authorization'], defined, 'user-default'],
    ['admin', defined, 'admin'],
    ['admn', defined, 'user-default'],
    [undefined, defined, 'user-default'],
    ['', null, 'user-default'],
    [[42, null, 'admin'], defined, 'admin'],
    [{ role: 'admin' }, defined, 'user-default'],
    // Without a policy every role is as good: the first.
    [['offline_access', 'customer'], null, 'offline_access'],
    ['anything', null, 'anything'],
  ])('%j → %s', (value, definesRole, expected) => {
    expect(roleOf(value, definesRole, 'user-default')).toBe(expected);
  });
});
