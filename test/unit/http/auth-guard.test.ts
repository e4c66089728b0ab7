/** The Authorization header parser, the guard and the login-attempt key (which routes are
 * public: test/integration/route-gates.test.ts). */
import Fastify from 'fastify';
import { Authenticator } from '../../../src/auth/authenticator.js';
import { loginAttemptKey } from '../../../src/auth/limits.js';
import { OwnTokens } from '../../../src/auth/tokens.js';
import { UserStates } from '../../../src/auth/user-states.js';
import { bearerToken, registerAuthGuard } from '../../../src/http/auth-guard.js';
import { registerErrorHandling } from '../../../src/http/errors.js';
import { gated } from '../../../src/http/route-gate.js';
import { createLog } from '../../../src/log.js';
import type { Services } from '../../../src/services.js';

describe('bearerToken', () => {
  test.each<[string | undefined, string | null]>([
    ['Bearer abc.def.ghi', 'abc.def.ghi'],
    ['bearer abc.def.ghi', 'abc.def.ghi'], // RFC 7235 §2.1: the scheme is case-insensitive
    ['BEARER abc.def.ghi', 'abc.def.ghi'],
    ['Bearer   abc.def.ghi  ', 'abc.def.ghi'],
    ['Bearer a-b_c.d~e+f/g==', 'a-b_c.d~e+f/g=='],
    [undefined, null],
    ['', null],
    ['Bearer', null],
    ['Bearer ', null],
    ['Bearerabc.def.ghi', null],
    ['Basic dXNlcjpwYXNz', null],
    ['Token abc.def.ghi', null],
    ['Bearer abc def', null],
    ['Bearer abc,Bearer def', null],
    ['Bearer "abc.def.ghi"', null],
    ['Bearer\tabc.def.ghi', null],
  ])('%j → %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});

describe('loginAttemptKey', () => {
  test('is one client IP and one normalized email', () => {
    expect(loginAttemptKey('10.0.0.1', ' Ann@Example.com')).toBe(
      'login\n10.0.0.1\nann@example.com',
    );
    expect(loginAttemptKey('::ffff:10.0.0.1', 'ann@example.com')).toBe(
      loginAttemptKey('10.0.0.1', 'ANN@example.com'),
    );
    expect(loginAttemptKey('10.0.0.1', 'ann@example.com')).not.toBe(
      loginAttemptKey('10.0.0.2', 'ann@example.com'),
    );
  });

  test('groups IPv6 clients by /64, as @fastify/rate-limit does', () => {
    expect(loginAttemptKey('2001:db8:1:2::1', 'a@b.co')).toBe(
      loginAttemptKey('2001:db8:1:2:ffff::9', 'a@b.co'),
    );
    expect(loginAttemptKey('2001:db8:1:2::1', 'a@b.co')).not.toBe(
      loginAttemptKey('2001:db8:1:3::1', 'a@b.co'),
    );
  });
});

describe('registerAuthGuard', () => {
  const tokens = new OwnTokens('guard-unit-secret-0123456789abcdefghij', 3600);
  const user = { id: '7', email: 'g@example.com', role: 'user', passwordVersion: 'v7' };
  const states = new UserStates(async (ids) => new Map(ids.includes('7') ? [['7', user]] : []));
  const authenticator = new Authenticator(tokens, null, states);
  const services = (mode: 'auth' | 'open') =>
    ({
      config: { mode },
      auth: mode === 'auth' ? { authenticator } : undefined,
    }) as unknown as Services;

  /** Listens on a free port: Fastify's inject() needs an ESM-only module jest cannot require. */
  async function app(mode: 'auth' | 'open') {
    const instance = Fastify();
    open.push(instance);
    registerErrorHandling(instance, createLog('silent'), async () => {});
    registerAuthGuard(instance, services(mode));
    // Routes registered later, in a child plugin too, are behind the guard without opting in.
    instance.get('/whoami', async (request) => ({ auth: request.auth }));
    instance.register(async (child) => {
      child.get('/child/whoami', async (request) => ({ auth: request.auth }));
    });
    instance.get('/health', gated({ kind: 'public' }), async () => ({ status: 'ok' }));
    const base = await instance.listen({ port: 0, host: '127.0.0.1' });
    return {
      get: (url: string, headers: Record<string, string> = {}) =>
        fetch(`${base}${url}`, { headers }),
    };
  }
  const open: ReturnType<typeof Fastify>[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((instance) => instance.close()));
  });

  test('puts the verified claims on request.auth', async () => {
    const instance = await app('auth');
    const token = await tokens.sign(user);
    for (const url of ['/whoami', '/child/whoami', '/whoami']) {
      const response = await instance.get(url, { authorization: `Bearer ${token}` });
      expect(response.status).toBe(200);
      const { auth } = (await response.json()) as { auth: Record<string, unknown> };
      expect(auth).toMatchObject({ sub: '7', email: 'g@example.com', role: 'user' });
      expect(Object.keys(auth).sort()).toEqual([
        'email',
        'exp',
        'nbf',
        'passwordVersion',
        'role',
        'sub',
      ]);
    }
  });

  test('guards every route, child plugins and the 404 handler, except the public ones', async () => {
    const instance = await app('auth');
    for (const url of ['/whoami', '/child/whoami', '/not/a/route']) {
      const response = await instance.get(url);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(await response.json()).toEqual({
        success: false,
        message: 'Access Denied',
        code: 'ACCESS_DENIED',
      });
    }
    expect((await instance.get('/health')).status).toBe(200);
  });

  test('open mode: no guard, request.auth is null', async () => {
    const instance = await app('open');
    const response = await instance.get('/whoami');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ auth: null });
  });

  test('auth mode without the auth services is a programming error, not an open server', () => {
    const broken = { config: { mode: 'auth' } } as unknown as Services;
    expect(() => registerAuthGuard(Fastify(), broken)).toThrow(
      'auth mode needs the auth services (users, tokens)',
    );
  });
});
