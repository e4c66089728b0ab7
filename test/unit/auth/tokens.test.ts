/** The JWT secret's life on disk, token lifetime parsing, signing and verification (CONTRACT §4). */
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, jest } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { loadJwtSecret, parseTokenTtl, TokenService } from '../../../src/auth/tokens.js';

const SECRET = 'unit-test-secret-0123456789abcdefghijklmnop';
const USER = { id: '42', email: 'ann@example.com', role: 'admin' };

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

describe('parseTokenTtl', () => {
  test.each([
    ['1h', '1h'],
    ['30m', '30m'],
    ['3600', 3600],
    [' 90 ', 90],
    ['2 days', '2 days'],
  ])('%j → %j (bare numbers are seconds)', (text, expected) => {
    expect(parseTokenTtl(text)).toBe(expected);
  });
});

describe('TokenService', () => {
  const tokens = TokenService.create(SECRET, '1h');

  test('signs HS256 with sub, email, role, iat and exp = iat + ttl', () => {
    const token = tokens.sign(USER);
    const decoded = jwt.decode(token, { complete: true });
    expect(decoded?.header).toEqual({ alg: 'HS256', typ: 'JWT' });
    const payload = decoded?.payload as Record<string, unknown>;
    expect(Object.keys(payload).sort()).toEqual(['email', 'exp', 'iat', 'role', 'sub']);
    expect(payload).toMatchObject({ sub: '42', email: 'ann@example.com', role: 'admin' });
    expect(payload.exp).toBe((payload.iat as number) + 3600);
    expect(tokens.verify(token)).toEqual(payload);
  });

  test.each([
    ['3600', 3600],
    ['90', 90],
    ['15m', 900],
    ['2d', 172_800],
  ])('ttl %j lasts %d seconds', (ttl, seconds) => {
    const payload = jwt.decode(TokenService.create(SECRET, ttl).sign(USER)) as jwt.JwtPayload;
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(seconds);
  });

  test.each(['soon', '', '0', '-1h', '500ms', '1 fortnight'])('ttl %j is refused', (ttl) => {
    expect(() => TokenService.create(SECRET, ttl)).toThrow(
      `--token-ttl '${ttl}' is not a duration like 1h, 30m or 3600 (seconds)`,
    );
  });

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const claims = () => ({
    sub: '42',
    email: 'ann@example.com',
    role: 'admin',
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
      () => jwt.sign({ sub: '42', email: 'ann@example.com' }, SECRET, { algorithm: 'HS256' }),
    ],
    ['no sub', () => jwt.sign({ email: 'ann@example.com' }, SECRET, { expiresIn: 600 })],
    ['no email', () => jwt.sign({}, SECRET, { subject: '42', expiresIn: 600 })],
    ['a numeric sub', () => jwt.sign({ ...claims(), sub: 42 }, SECRET)],
    ['not yet valid', () => jwt.sign({ ...claims(), nbf: now() + 600 }, SECRET)],
    [
      'a changed payload under the original signature',
      () => {
        const [header, , signature] = tokens.sign(USER).split('.');
        return `${header}.${b64url({ ...claims(), sub: '1' })}.${signature}`;
      },
    ],
    ['a string payload', () => jwt.sign('just text', SECRET)],
    [
      'no role (a token from before roles)',
      () => jwt.sign({ sub: '42', email: 'ann@example.com' }, SECRET, { expiresIn: 600 }),
    ],
    ['a numeric role', () => jwt.sign({ ...claims(), role: 1 }, SECRET)],
    [
      'a role edited under the original signature',
      () => {
        const [header, payload, signature] = tokens.sign({ ...USER, role: 'user' }).split('.');
        const edited = {
          ...JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()),
          role: 'admin',
        };
        return `${header}.${b64url(edited)}.${signature}`;
      },
    ],
  ])('refuses %s', (_name, make) => {
    expect(tokens.verify(make())).toBeNull();
  });

  describe('a token verified before', () => {
    afterEach(() => {
      jest.restoreAllMocks();
    });
    const at = (seconds: number) => jest.spyOn(Date, 'now').mockReturnValue(seconds * 1000);

    test('gives the same frozen claims again, until the clock reaches its exp', () => {
      const service = TokenService.create(SECRET, '1h');
      const exp = now() + 5;
      const token = jwt.sign({ ...claims(), exp }, SECRET);
      const first = service.verify(token);
      expect(first).toEqual({ ...claims(), exp, iat: first?.iat });
      expect(Object.isFrozen(first)).toBe(true);
      expect(service.verify(token)).toBe(first);
      at(exp - 1);
      expect(service.verify(token)).toBe(first);
      // What jsonwebtoken itself says at that second: expired, and expired() agrees.
      at(exp);
      expect(service.verify(token)).toBeNull();
      expect(service.expired(token)).toBe(true);
      expect(() => jwt.verify(token, SECRET, { algorithms: ['HS256'] })).toThrow(
        jwt.TokenExpiredError,
      );
    });

    test('does not vouch for another text: a changed signature or payload is refused', () => {
      const service = TokenService.create(SECRET, '1h');
      const token = service.sign(USER);
      expect(service.verify(token)).not.toBeNull();
      const [header, payload, signature = ''] = token.split('.');
      const flipped = signature.endsWith('A') ? 'B' : 'A';
      expect(service.verify(`${header}.${payload}.${signature.slice(0, -1)}${flipped}`)).toBeNull();
      expect(
        service.verify(`${header}.${b64url({ ...claims(), sub: '1' })}.${signature}`),
      ).toBeNull();
      expect(service.verify(`${token} `)).toBeNull();
    });

    test('with an nbf is checked again each time', () => {
      const service = TokenService.create(SECRET, '1h');
      const nbf = now() - 10;
      const token = jwt.sign({ ...claims(), nbf }, SECRET);
      expect(service.verify(token)).not.toBeNull();
      at(nbf - 5);
      expect(service.verify(token)).toBeNull();
    });
  });

  test('expired() is true only for our own token past its exp', () => {
    const past = { ...claims(), iat: now() - 7200, exp: now() - 3600 };
    expect(tokens.expired(jwt.sign(past, SECRET))).toBe(true);
    expect(tokens.expired(jwt.sign(past, `${SECRET}-other`))).toBe(false);
    expect(tokens.expired(jwt.sign(past, SECRET, { algorithm: 'HS512' }))).toBe(false);
    expect(tokens.expired(tokens.sign(USER))).toBe(false);
    expect(tokens.expired('garbage')).toBe(false);
  });
});
