/** The JWT secret's life on disk, and the gateway's own tokens: signing and verification. */
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from '@jest/globals';
import { errors } from 'jose';
import jwt from 'jsonwebtoken';
import { loadJwtSecret, OwnTokens } from '../../../src/auth/tokens.js';

const SECRET = 'unit-test-secret-0123456789abcdefghijklmnop';
const USER = { id: '42', email: 'ann@example.com', role: 'admin', passwordVersion: 'v1' };

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-tokens-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadJwtSecret', () => {
  test('a configured secret of 32 bytes or more is used as given, and nothing is written', async () => {
    const configured = 'x'.repeat(32);
    expect(await loadJwtSecret(configured, path.join(dir, 'state'))).toBe(configured);
    await expect(stat(path.join(dir, 'state'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('a configured secret shorter than 32 bytes is refused, without echoing it', async () => {
    const attempt = loadJwtSecret('short-secret', dir);
    await expect(attempt).rejects.toThrow(
      'the JWT secret (--jwt-secret / TABLEGATE_JWT_SECRET) must be at least 32 bytes; it is 12',
    );
    await expect(loadJwtSecret('short-secret', dir)).rejects.not.toThrow('short-secret');
  });

  test('bytes, not characters, count: 11 three-byte characters are 33 bytes', async () => {
    expect(await loadJwtSecret('€'.repeat(11), dir)).toBe('€'.repeat(11));
    await expect(loadJwtSecret('€'.repeat(10), dir)).rejects.toThrow('it is 30');
  });

  test('without one, a secret is generated into <stateDir>/jwt-secret (0600, directory created) and reused', async () => {
    const stateDir = path.join(dir, 'nested', 'state');
    const first = await loadJwtSecret(null, stateDir);
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes, base64url
    const file = path.join(stateDir, 'jwt-secret');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).trim()).toBe(first);
    expect(await loadJwtSecret(null, stateDir)).toBe(first);
  });

  test('instances starting at once agree on one secret', async () => {
    const secrets = await Promise.all(Array.from({ length: 20 }, () => loadJwtSecret(null, dir)));
    expect(new Set(secrets).size).toBe(1);
    expect((await readFile(path.join(dir, 'jwt-secret'), 'utf8')).trim()).toBe(secrets[0]);
  });

  test('a secret file loosened by hand is made private again', async () => {
    const secret = await loadJwtSecret(null, dir);
    const file = path.join(dir, 'jwt-secret');
    await chmod(file, 0o644);
    expect(await loadJwtSecret(null, dir)).toBe(secret);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  test('a secret file holding too little is refused, not silently replaced', async () => {
    await writeFile(path.join(dir, 'jwt-secret'), 'tiny\n', { mode: 0o600 });
    await expect(loadJwtSecret(null, dir)).rejects.toThrow(
      `${path.join(dir, 'jwt-secret')} holds fewer than 32 bytes; delete it to generate a new secret`,
    );
  });
});

describe('OwnTokens', () => {
  const tokens = new OwnTokens(SECRET, 3600);

  test('signs HS256 with sub, email, role, pwv, iat and exp = iat + ttl, verified by another library too', async () => {
    const token = await tokens.sign(USER);
    const decoded = jwt.decode(token, { complete: true });
    expect(decoded?.header).toEqual({ alg: 'HS256', typ: 'JWT' });
    const payload = jwt.verify(token, SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    expect(Object.keys(payload).sort()).toEqual(['email', 'exp', 'iat', 'pwv', 'role', 'sub']);
    expect(payload).toMatchObject({
      sub: '42',
      email: 'ann@example.com',
      role: 'admin',
      pwv: 'v1',
    });
    expect(payload.exp).toBe((payload.iat as number) + 3600);
    expect(await tokens.verify(token)).toEqual({
      sub: '42',
      email: 'ann@example.com',
      role: 'admin',
      exp: payload.exp,
      nbf: 0,
      passwordVersion: 'v1',
    });
  });

  test.each([
    [3600, 3600],
    [90, 90],
  ])('a lifetime of %d seconds lasts %d seconds', async (ttl, seconds) => {
    const payload = jwt.decode(await new OwnTokens(SECRET, ttl).sign(USER)) as jwt.JwtPayload;
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(seconds);
  });

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const claims = () => ({
    sub: '42',
    email: 'ann@example.com',
    role: 'admin',
    pwv: 'v1',
    iat: now(),
    exp: now() + 600,
  });
  const hmac = (data: string, secret = SECRET) =>
    createHmac('sha256', secret).update(data).digest('base64url');

  test.each<[string, () => string]>([
    ['garbage', () => 'garbage'],
    ['an empty string', () => ''],
    ['another secret', () => jwt.sign(claims(), `${SECRET}-other`, { algorithm: 'HS256' })],
    ['alg none', () => `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims())}.`],
    ['HS512 with our secret', () => jwt.sign(claims(), SECRET, { algorithm: 'HS512' })],
    ['RS256', () => jwt.sign(claims(), privateKey, { algorithm: 'RS256' })],
    [
      'an RS256 header over an HMAC of our secret (key confusion)',
      () => {
        const data = `${b64url({ alg: 'RS256', typ: 'JWT' })}.${b64url(claims())}`;
        return `${data}.${hmac(data)}`;
      },
    ],
    [
      'an expired token',
      () => jwt.sign({ ...claims(), iat: now() - 7200, exp: now() - 3600 }, SECRET),
    ],
    [
      'no exp',
      () => jwt.sign({ sub: '42', email: 'ann@example.com', role: 'a', pwv: 'v' }, SECRET),
    ],
    [
      'no iat',
      () => {
        const { iat: _, ...withoutIat } = claims();
        return jwt.sign(withoutIat, SECRET, { noTimestamp: true });
      },
    ],
    ['no sub', () => jwt.sign({ ...claims(), sub: undefined }, SECRET)],
    ['no email', () => jwt.sign({ ...claims(), email: undefined }, SECRET)],
    ['a numeric sub', () => jwt.sign({ ...claims(), sub: 42 }, SECRET)],
    ['not yet valid', () => jwt.sign({ ...claims(), nbf: now() + 600 }, SECRET)],
    [
      'a changed payload under the original signature',
      () => {
        const token = jwt.sign(claims(), SECRET);
        const [header, , signature] = token.split('.');
        return `${header}.${b64url({ ...claims(), sub: '1' })}.${signature}`;
      },
    ],
    ['a string payload', () => jwt.sign('just text', SECRET)],
    [
      'no role (a token from before roles)',
      () => jwt.sign({ ...claims(), role: undefined }, SECRET),
    ],
    [
      'no password version (a token from before revocation)',
      () => jwt.sign({ ...claims(), pwv: undefined }, SECRET),
    ],
    ['a numeric role', () => jwt.sign({ ...claims(), role: 1 }, SECRET)],
    [
      'a role edited under the original signature',
      () => {
        const [header, payload, signature] = jwt.sign(claims(), SECRET).split('.');
        const edited = {
          ...JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()),
          role: 'root',
        };
        return `${header}.${b64url(edited)}.${signature}`;
      },
    ],
  ])('refuses %s', async (_name, make) => {
    await expect(tokens.verify(make())).rejects.toThrow();
  });

  test('says "expired" (jose JWTExpired) only for our own token past its exp', async () => {
    const past = { ...claims(), iat: now() - 7200, exp: now() - 3600 };
    await expect(tokens.verify(jwt.sign(past, SECRET))).rejects.toBeInstanceOf(errors.JWTExpired);
    for (const forged of [
      jwt.sign(past, `${SECRET}-other`),
      jwt.sign(past, SECRET, { algorithm: 'HS512' }),
    ]) {
      const failure = await tokens.verify(forged).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Error);
      expect(failure).not.toBeInstanceOf(errors.JWTExpired);
    }
  });
});
