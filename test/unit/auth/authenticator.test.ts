/**
 * Which verifier a token reaches (auth/authenticator.ts), the verified-token cache and its time
 * bounds, and own tokens checked against their user's state. The provider's keys here are a PEM
 * file (auth/provider-keys.ts loadKeyFile); the JWKS path is tested over HTTP in
 * test/integration/identity-provider.test.ts.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, jest } from '@jest/globals';
import { SignJWT } from 'jose';
import { Authenticator } from '../../../src/auth/authenticator.js';
import { KeyFileError, loadKeyFile } from '../../../src/auth/provider-keys.js';
import { ProviderTokens } from '../../../src/auth/provider-tokens.js';
import { OwnTokens } from '../../../src/auth/tokens.js';
import { type UserState, UserStates } from '../../../src/auth/user-states.js';
import { ApiError } from '../../../src/errors.js';

const SECRET = 'authenticator-unit-secret-0123456789abcdef';
const now = () => Math.floor(Date.now() / 1000);
const { privateKey, publicKey } = generateKeyPairSync('ed25519');

let dir: string;
let provider: ProviderTokens;
const rows: Record<string, UserState> = { '7': { role: 'user', passwordVersion: 'v7' } };
let reads = 0;
const own = new OwnTokens(SECRET, 3600);
const newAuthenticator = () =>
  new Authenticator(
    own,
    provider,
    new UserStates(async (ids) => {
      reads++;
      return new Map(ids.flatMap((id) => (rows[id] ? [[id, rows[id]] as const] : [])));
    }),
  );

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-authenticator-'));
  const file = path.join(dir, 'idp.pem');
  await writeFile(file, publicKey.export({ type: 'spki', format: 'pem' }));
  provider = new ProviderTokens(await loadKeyFile(file), {
    issuer: 'https://idp.example.com',
    audience: 'shop',
    claims: { userId: 'sub', email: 'email', role: 'roles' },
    defaultRole: 'user',
    definesRole: null,
  });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  jest.restoreAllMocks();
});

const providerToken = (claims: Record<string, unknown> = {}) =>
  new SignJWT({
    iss: 'https://idp.example.com',
    aud: 'shop',
    sub: 'u-1',
    roles: ['editor'],
    exp: now() + 600,
    ...claims,
  })
    .setProtectedHeader({ alg: 'EdDSA' })
    .sign(privateKey);

async function failure(promise: Promise<unknown>): Promise<{ code: string; header: string }> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  return {
    code: (error as ApiError).code,
    header: (error as ApiError).headers['WWW-Authenticate'] ?? '',
  };
}

test('an own token: verified once, then known without a read, while its user is unchanged', async () => {
  const authenticator = newAuthenticator();
  const token = await own.sign({
    id: '7',
    email: 'g@example.com',
    role: 'user',
    passwordVersion: 'v7',
  });
  expect(authenticator.known(token)).toBeUndefined();
  const claims = await authenticator.authenticate(token);
  expect(claims).toEqual({
    sub: '7',
    email: 'g@example.com',
    role: 'user',
    exp: claims.exp,
    nbf: 0,
    passwordVersion: 'v7',
  });
  expect(authenticator.known(token)).toBe(claims);
  expect(reads).toBe(1);
});

test('an own token whose user changed is refused: 401 Access Denied', async () => {
  const authenticator = newAuthenticator();
  const stale = await own.sign({
    id: '7',
    email: 'g@example.com',
    role: 'admin',
    passwordVersion: 'v7',
  });
  expect(await failure(authenticator.authenticate(stale))).toEqual({
    code: 'ACCESS_DENIED',
    header: 'Bearer',
  });
  const removed = await own.sign({
    id: '8',
    email: 'h@example.com',
    role: 'user',
    passwordVersion: 'v8',
  });
  expect((await failure(authenticator.authenticate(removed))).code).toBe('ACCESS_DENIED');
  expect(authenticator.known(removed)).toBeUndefined();
});

test('a provider token: claims mapped, never a password version, never a read', async () => {
  const authenticator = newAuthenticator();
  const before = reads;
  const token = await providerToken({ email: 'u@example.com' });
  const claims = await authenticator.authenticate(token);
  expect(claims).toMatchObject({
    sub: 'u-1',
    email: 'u@example.com',
    role: 'editor',
    passwordVersion: null,
  });
  expect(authenticator.known(token)).toBe(claims);
  expect(reads).toBe(before);
});

test('a known provider token stops being known 30 s past its exp, as jose would say', async () => {
  const authenticator = newAuthenticator();
  const exp = now() + 60;
  const token = await providerToken({ exp });
  await authenticator.authenticate(token);
  jest.spyOn(Date, 'now').mockReturnValue((exp + 29) * 1000);
  expect(authenticator.known(token)).toBeDefined();
  jest.spyOn(Date, 'now').mockReturnValue((exp + 30) * 1000);
  expect(authenticator.known(token)).toBeUndefined();
});

test('each algorithm reaches its own verifier only', async () => {
  const authenticator = newAuthenticator();
  // An HS256 token with the provider's claims: checked against our secret, which did not sign it.
  const hs = await new SignJWT({ iss: 'https://idp.example.com', aud: 'shop', sub: 'u-1' })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('10m')
    .sign(publicKey.export({ type: 'spki', format: 'der' }));
  expect((await failure(authenticator.authenticate(hs))).code).toBe('ACCESS_DENIED');
  // An own-shaped token signed by the provider's key is a provider token: its claims decide.
  const asProvider = await providerToken({ role: 'admin', pwv: 'v7', sub: '7' });
  expect(await authenticator.authenticate(asProvider)).toMatchObject({
    sub: '7',
    role: 'editor',
    passwordVersion: null,
  });
  // Without a provider, an EdDSA token reaches nothing.
  const ownOnly = new Authenticator(own, null, new UserStates(async () => new Map()));
  expect((await failure(ownOnly.authenticate(await providerToken()))).code).toBe('ACCESS_DENIED');
});

test('an expired token says so (RFC 6750) only when its signature is good', async () => {
  const authenticator = newAuthenticator();
  const expired = await providerToken({ exp: now() - 3600 });
  expect(await failure(authenticator.authenticate(expired))).toEqual({
    code: 'ACCESS_DENIED',
    header: 'Bearer error="invalid_token", error_description="The access token expired"',
  });
  const forged = `${expired.slice(0, -4)}AAAA`;
  expect(await failure(authenticator.authenticate(forged))).toEqual({
    code: 'ACCESS_DENIED',
    header: 'Bearer',
  });
});

describe('loadKeyFile', () => {
  test.each<[string, string | (() => string), string]>([
    ['garbage', 'hello', 'not a PEM public key, a JWK or a JWK set'],
    [
      'a private key',
      () => privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      'holds a private key; give only the public key',
    ],
    [
      'a private JWK',
      () => JSON.stringify(privateKey.export({ format: 'jwk' })),
      'holds a private or secret key; give only the public key',
    ],
    [
      'a P-384 key',
      () =>
        generateKeyPairSync('ec', { namedCurve: 'P-384' })
          .publicKey.export({ type: 'spki', format: 'pem' })
          .toString(),
      'a ec key; tokens are checked with RSA (RS256), P-256 (ES256) or Ed25519 (EdDSA) keys',
    ],
    ['broken JSON', '{"keys": [', 'not valid JSON (a JWK or a JWK set)'],
  ])('%s is refused', async (_name, content, message) => {
    const file = path.join(dir, 'key');
    await writeFile(file, typeof content === 'string' ? content : content());
    await expect(loadKeyFile(file)).rejects.toThrow(new KeyFileError(message));
  });

  test('a missing file', async () => {
    await expect(loadKeyFile(path.join(dir, 'missing.pem'))).rejects.toThrow(
      'cannot read it: ENOENT',
    );
  });
});
