/**
 * Tokens from an identity provider, end to end: a JWKS endpoint this test serves over HTTP with
 * keys it generates, the real gateway fetching it, RS256, ES256 and EdDSA tokens signed here.
 * Rotation (a kid first seen after start, fetched at most once per 30 s), every refusal (issuer,
 * audience, expiry, nbf, algorithm confusion, alg none) with the exact 401, Keycloak- and
 * Auth0-shaped claims mapped to roles and to `@user.id` in a policy's where, a key file instead of
 * a URL, the provider being away, and the gateway's own users beside it all.
 */
import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { exportJWK, type JWK, type JWTPayload, SignJWT } from 'jose';
import { JWKS_REFETCH_COOLDOWN_MS } from '../../src/limits.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SECRET = 'identity-provider-secret-0123456789abcdef';
const ISSUER = 'https://sso.example.com/realms/shop';
const AUDIENCE = 'shop-api';
const FIXTURE = `
CREATE TABLE orders (id INT PRIMARY KEY, owner VARCHAR(64) NOT NULL, note VARCHAR(32) NOT NULL);
INSERT INTO orders VALUES
  (1, 'kc-ann', 'ann 1'), (2, 'kc-ann', 'ann 2'), (3, 'kc-bob', 'bob 1'),
  (4, 'auth0|65f0c0ffee', 'auth0 1'), (5, '42', 'numeric id');
`;
const POLICY = {
  roles: {
    customer: { tables: { orders: { read: { where: 'owner eq @user.id' } } } },
    admin: { tables: { '*': { read: true } } },
    // --default-role: a token whose role claim names no role the policy defines.
    user: { tables: {} },
  },
};
const ACCESS_DENIED = { success: false, message: 'Access Denied', code: 'ACCESS_DENIED' };
const EXPIRED_HINT = 'Bearer error="invalid_token", error_description="The access token expired"';

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

async function get(base: string, url: string, token?: string): Promise<Answer> {
  const response = await fetch(`${base}${url}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : null,
  };
}

function expectDenied(answer: Answer, header = 'Bearer'): void {
  expect([answer.status, answer.headers.get('www-authenticate'), answer.body]).toEqual([
    401,
    header,
    ACCESS_DENIED,
  ]);
}

interface SigningKey {
  readonly kid: string;
  readonly alg: 'RS256' | 'ES256' | 'EdDSA';
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly jwk: JWK;
}

async function signingKey(kid: string, alg: SigningKey['alg']): Promise<SigningKey> {
  const pair =
    alg === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : alg === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('ed25519');
  // As Keycloak publishes them: kid, alg and use beside the key.
  const jwk = { ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, ...pair, jwk };
}

const now = () => Math.floor(Date.now() / 1000);

/** A token as a provider signs it: iss, aud, sub, iat and exp unless `claims` says otherwise. */
function sign(
  key: SigningKey,
  claims: JWTPayload = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  return new SignJWT({
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'kc-ann',
    iat: now(),
    exp: now() + 600,
    ...claims,
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...header })
    .sign(key.privateKey);
}

/** Keycloak's shape: roles under realm_access.roles, beside roles the policy does not know. */
const keycloak = (roles: string[], sub = 'kc-ann') => ({
  sub,
  email: `${sub}@example.com`,
  realm_access: { roles: ['offline_access', 'uma_authorization', ...roles] },
});

/** The JWKS endpoint: serves whatever `keys` holds now, and counts its fetches. */
class JwksServer {
  keys: JWK[] = [];
  fetches = 0;
  status = 200;
  private readonly server = http.createServer((request, response) => {
    this.fetches++;
    if (request.url !== '/certs' || this.status !== 200) {
      response.writeHead(this.status === 200 ? 404 : this.status).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ keys: this.keys }));
  });

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/certs`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let db: TestDatabase;
let dir: string;
let jwks: JwksServer;
let gw: TestGateway;
let rsa: SigningKey;
let ec: SigningKey;
let ed: SigningKey;

beforeAll(async () => {
  [rsa, ec, ed] = await Promise.all([
    signingKey('rsa-1', 'RS256'),
    signingKey('ec-1', 'ES256'),
    signingKey('ed-1', 'EdDSA'),
  ]);
  db = await createTestDatabase(FIXTURE);
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-idp-'));
  const policyFile = path.join(dir, 'policy.json');
  await writeFile(policyFile, JSON.stringify(POLICY));
  jwks = new JwksServer();
  jwks.keys = [rsa.jwk, ec.jwk, ed.jwk];
  const jwksUrl = await jwks.start();
  gw = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: SECRET,
    policyFile,
    identityProvider: {
      jwksUrl,
      publicKeyFile: null,
      issuer: ISSUER,
      audience: AUDIENCE,
      claims: { userId: 'sub', email: 'email', role: 'realm_access.roles' },
    },
  });
});

afterAll(async () => {
  await gw?.close();
  await jwks?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('Keycloak-shaped tokens from a JWKS URL', () => {
  test.each(['RS256', 'ES256', 'EdDSA'])(
    'a %s token: /auth/me names the caller, its role the first of realm_access.roles the policy defines',
    async (alg) => {
      const key = { RS256: rsa, ES256: ec, EdDSA: ed }[alg] as SigningKey;
      const token = await sign(key, keycloak(['customer', 'admin']));
      const me = await get(gw.url, '/auth/me', token);
      expect([me.status, me.body]).toEqual([
        200,
        { id: 'kc-ann', email: 'kc-ann@example.com', role: 'customer' },
      ]);
    },
  );

  test('the keys were fetched once, at start, for all three', () => {
    expect(jwks.fetches).toBe(1);
  });

  test("@user.id is the token's sub in the policy's where: each customer reads their own orders", async () => {
    const ann = await get(
      gw.url,
      '/table/orders/read?$orderby=id',
      await sign(rsa, keycloak(['customer'])),
    );
    expect(ann.body).toEqual([
      { id: 1, owner: 'kc-ann', note: 'ann 1' },
      { id: 2, owner: 'kc-ann', note: 'ann 2' },
    ]);
    const bob = await get(
      gw.url,
      "/table/orders/read?$filter=owner eq 'kc-ann' or 1 eq 1",
      await sign(ec, keycloak(['customer'], 'kc-bob')),
    );
    expect(bob.body).toEqual([{ id: 3, owner: 'kc-bob', note: 'bob 1' }]);
    const admin = await get(
      gw.url,
      '/table/orders/read?$select=id',
      await sign(ed, keycloak(['admin'], 'kc-root')),
    );
    expect((admin.body as unknown[]).length).toBe(5);
  });

  test('no role the policy defines: --default-role; no email: null', async () => {
    const token = await sign(rsa, { sub: 'kc-new', realm_access: { roles: ['offline_access'] } });
    const me = await get(gw.url, '/auth/me', token);
    expect(me.body).toEqual({ id: 'kc-new', email: null, role: 'user' });
    // `user` may read nothing: the table is hidden, as for any role the policy does not grant it.
    expect((await get(gw.url, '/table/orders/read', token)).status).toBe(404);
  });

  test('a token used again is answered from the verified cache, the same', async () => {
    const token = await sign(ec, keycloak(['customer']));
    for (let i = 0; i < 3; i++) {
      expect((await get(gw.url, '/auth/me', token)).body).toMatchObject({ id: 'kc-ann' });
    }
  });
});

describe('refused: 401 with the exact body and WWW-Authenticate', () => {
  test.each<[string, () => Promise<string>, string?]>([
    ['another issuer', () => sign(rsa, { iss: 'https://evil.example.com/realms/shop' })],
    ['no issuer', () => sign(rsa, { iss: undefined })],
    ['another audience', () => sign(rsa, { aud: 'another-app' })],
    ['no audience', () => sign(ec, { aud: undefined })],
    [
      'expired (past the 30 s allowed for clocks)',
      () => sign(ed, { iat: now() - 3600, exp: now() - 60 }),
      EXPIRED_HINT,
    ],
    ['not valid yet (nbf past the 30 s allowed)', () => sign(rsa, { nbf: now() + 120 })],
    ['no exp', () => sign(rsa, { exp: undefined })],
    ['no sub', () => sign(rsa, { sub: undefined })],
    ['an empty sub', () => sign(rsa, { sub: '' })],
    [
      'signed by a key the JWKS does not hold, under a kid it does',
      async () => sign({ ...(await signingKey('rsa-1', 'RS256')) }),
    ],
    [
      'expired and signed by a key the JWKS does not hold: forged, so no invalid_token hint',
      async () =>
        sign({ ...(await signingKey('rsa-1', 'RS256')) }, { iat: now() - 3600, exp: now() - 60 }),
    ],
    [
      'an ES256 token under the RSA key’s kid (another family)',
      async () => sign({ ...ec, kid: 'rsa-1' }),
    ],
    [
      'HS256 signed with the RSA public key’s PEM as the secret (algorithm confusion)',
      async () => {
        const pem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
        const data = [
          { alg: 'HS256', typ: 'JWT', kid: 'rsa-1' },
          { iss: ISSUER, aud: AUDIENCE, sub: 'kc-ann', iat: now(), exp: now() + 600 },
        ]
          .map((part) => Buffer.from(JSON.stringify(part)).toString('base64url'))
          .join('.');
        return `${data}.${createHmac('sha256', pem).update(data).digest('base64url')}`;
      },
    ],
    [
      'HS256 signed with the JWK of the public key as the secret',
      async () => {
        const data = [
          { alg: 'HS256', typ: 'JWT' },
          { iss: ISSUER, aud: AUDIENCE, sub: 'kc-ann', iat: now(), exp: now() + 600 },
        ]
          .map((part) => Buffer.from(JSON.stringify(part)).toString('base64url'))
          .join('.');
        const secret = JSON.stringify(rsa.jwk);
        return `${data}.${createHmac('sha256', secret).update(data).digest('base64url')}`;
      },
    ],
    [
      'alg none',
      async () =>
        [
          { alg: 'none', typ: 'JWT' },
          { iss: ISSUER, aud: AUDIENCE, sub: 'kc-ann', iat: now(), exp: now() + 600 },
        ]
          .map((part) => Buffer.from(JSON.stringify(part)).toString('base64url'))
          .join('.')
          .concat('.'),
    ],
    [
      'RS512 (not an algorithm the gateway takes)',
      async () =>
        new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'kc-ann', exp: now() + 600 })
          .setProtectedHeader({ alg: 'RS512', kid: 'rsa-1' })
          .sign(rsa.privateKey),
    ],
    [
      'the payload edited under a good signature',
      async () => {
        const [header, , signature] = (await sign(rsa, keycloak(['customer']))).split('.');
        const edited = Buffer.from(JSON.stringify(keycloak(['admin']))).toString('base64url');
        return `${header}.${edited}.${signature}`;
      },
    ],
    // A rest parameter: jest would take a third named parameter that a row lacks for `done`.
  ])('%s', async (_name, make, ...hint) => {
    const header = hint[0];
    const token = await make();
    expectDenied(await get(gw.url, '/auth/me', token), header);
    expectDenied(await get(gw.url, '/table/orders/read', token), header);
  });

  test('/auth/me without a token', async () => {
    expectDenied(await get(gw.url, '/auth/me'));
  });
});

describe('key rotation', () => {
  test('a kid first seen after start is fetched — at most once per 30 s', async () => {
    const rotated = await signingKey('rsa-2', 'RS256');
    const token = await sign(rotated, keycloak(['customer']));
    jwks.keys = [rsa.jwk, rotated.jwk];
    const before = jwks.fetches;
    const realNow = Date.now;
    try {
      // Past the cooldown of the last fetch: requests with the new kid at once share one fetch.
      Date.now = () => realNow() + JWKS_REFETCH_COOLDOWN_MS + 1000;
      const answers = await Promise.all([1, 2, 3].map(() => get(gw.url, '/auth/me', token)));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
      expect(answers[0]?.body).toEqual({
        id: 'kc-ann',
        email: 'kc-ann@example.com',
        role: 'customer',
      });
      expect(jwks.fetches - before).toBe(1);
      // Another unknown kid right after: refused without another fetch.
      const stranger = await sign(await signingKey('rsa-3', 'RS256'), keycloak(['customer']));
      expectDenied(await get(gw.url, '/auth/me', stranger));
      expect(jwks.fetches - before).toBe(1);
    } finally {
      Date.now = realNow;
    }
    // The old key still works: a rotation publishes both for a while.
    expect((await get(gw.url, '/auth/me', await sign(rsa, keycloak(['admin'])))).status).toBe(200);
  });
});

describe('the gateway’s own users beside the provider', () => {
  test('register, log in, HS256 token: works as before', async () => {
    const credentials = { email: 'own@example.com', password: 'correct horse battery' };
    const post = (url: string) =>
      fetch(`${gw.url}${url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(credentials),
      });
    expect((await post('/auth/register')).status).toBe(200);
    const { token } = (await (await post('/auth/login')).json()) as { token: string };
    const me = await get(gw.url, '/auth/me', token);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ email: 'own@example.com', role: 'user' });
    expect((me.body as { id: string }).id).toMatch(/^\d+$/);
  });

  test('an HS256 token signed with our secret but the provider’s claims is not a provider token', async () => {
    const token = await new SignJWT({ ...keycloak(['admin']), iss: ISSUER, aud: AUDIENCE })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(Buffer.from(SECRET));
    expectDenied(await get(gw.url, '/auth/me', token));
  });

  test('a provider token cannot change a password here: 403 NOT_OWN_USER', async () => {
    const response = await fetch(`${gw.url}/auth/password`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await sign(rsa, keycloak(['customer']))}`,
      },
      body: JSON.stringify({ old_password: 'whatever1', new_password: 'whatever2' }),
    });
    expect([response.status, await response.json()]).toEqual([
      403,
      {
        success: false,
        message:
          'This user signs in through the identity provider: change the password there, not here',
        code: 'NOT_OWN_USER',
      },
    ]);
  });
});

describe('Auth0-shaped tokens from a key file', () => {
  const AUTH0_ISSUER = 'https://tenant.eu.auth0.com/';
  const AUTH0_AUDIENCE = 'https://api.shop.example.com';
  let auth0: TestGateway;
  let key: SigningKey;

  beforeAll(async () => {
    key = await signingKey('auth0-key', 'RS256');
    const keyFile = path.join(dir, 'auth0-jwks.json');
    await writeFile(keyFile, JSON.stringify({ keys: [key.jwk] }));
    auth0 = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: SECRET,
      policyFile: path.join(dir, 'policy.json'),
      identityProvider: {
        jwksUrl: null,
        publicKeyFile: keyFile,
        issuer: AUTH0_ISSUER,
        audience: AUTH0_AUDIENCE,
        claims: {
          userId: 'sub',
          email: 'https://shop.example.com/email',
          role: 'https://shop.example.com/roles',
        },
      },
    });
  });
  afterAll(async () => {
    await auth0?.close();
  });

  const auth0Token = (claims: JWTPayload) =>
    sign(key, {
      iss: AUTH0_ISSUER,
      // Auth0 access tokens name the API and the userinfo endpoint.
      aud: [AUTH0_AUDIENCE, 'https://tenant.eu.auth0.com/userinfo'],
      sub: 'auth0|65f0c0ffee',
      azp: 'client-id',
      scope: 'openid profile',
      ...claims,
    });

  test('a namespaced claim (dots in its name) gives the role and the email', async () => {
    const token = await auth0Token({
      'https://shop.example.com/roles': ['customer'],
      'https://shop.example.com/email': 'ann@shop.example.com',
    });
    expect((await get(auth0.url, '/auth/me', token)).body).toEqual({
      id: 'auth0|65f0c0ffee',
      email: 'ann@shop.example.com',
      role: 'customer',
    });
    expect((await get(auth0.url, '/table/orders/read', token)).body).toEqual([
      { id: 4, owner: 'auth0|65f0c0ffee', note: 'auth0 1' },
    ]);
  });

  test('a numeric user id claim is @user.id as a string', async () => {
    const token = await auth0Token({
      sub: 42 as unknown as string,
      'https://shop.example.com/roles': 'customer',
    });
    expect((await get(auth0.url, '/auth/me', token)).body).toEqual({
      id: '42',
      email: null,
      role: 'customer',
    });
    expect((await get(auth0.url, '/table/orders/read', token)).body).toEqual([
      { id: 5, owner: '42', note: 'numeric id' },
    ]);
  });

  test('the Keycloak gateway’s keys and issuer are not this one’s', async () => {
    expectDenied(await get(auth0.url, '/auth/me', await sign(rsa, keycloak(['admin']))));
    expectDenied(
      await get(auth0.url, '/auth/me', await auth0Token({ iss: ISSUER, aud: AUDIENCE })),
    );
  });
});

describe('the provider away', () => {
  test('a JWKS that does not answer: provider tokens 503, own tokens unaffected, start not stopped', async () => {
    const down = new JwksServer();
    down.status = 500;
    const url = await down.start();
    const away = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: SECRET,
      identityProvider: {
        jwksUrl: url,
        publicKeyFile: null,
        issuer: ISSUER,
        audience: AUDIENCE,
        claims: { userId: 'sub', email: 'email', role: 'role' },
      },
    });
    try {
      const answer = await get(away.url, '/auth/me', await sign(rsa, keycloak(['customer'])));
      expect([answer.status, answer.headers.get('retry-after'), answer.body]).toEqual([
        503,
        '5',
        {
          success: false,
          message: "The identity provider's keys could not be fetched; retry in a few seconds",
          code: 'IDENTITY_PROVIDER_UNAVAILABLE',
        },
      ]);
      // The start-up fetch failed, and the cooldown keeps a failing provider from being asked
      // on every request.
      expect(down.fetches).toBe(1);
      const credentials = { email: 'away@example.com', password: 'correct horse battery' };
      const post = (url: string) =>
        fetch(`${away.url}${url}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(credentials),
        });
      expect((await post('/auth/register')).status).toBe(200);
      const login = await post('/auth/login');
      const { token } = (await login.json()) as { token: string };
      expect((await get(away.url, '/auth/me', token)).status).toBe(200);
    } finally {
      await away.close();
      await down.close();
    }
  });
});
