/** Credential rules, email normalization and password hashing (docs/auth.md), no database. */
import { verify } from '@node-rs/argon2';
import {
  ARGON2_OPTIONS,
  hashPassword,
  normalizeEmail,
  parseCredentials,
} from '../../../src/auth/users.js';
import { ApiError } from '../../../src/errors.js';

function failure(body: unknown): { status: number; code: string; message: string } {
  try {
    parseCredentials(body);
  } catch (error) {
    if (error instanceof ApiError) {
      return { status: error.status, code: error.code, message: error.message };
    }
    throw error;
  }
  throw new Error('parseCredentials accepted the body');
}

const bad = (message: string) => ({ status: 400, code: 'INVALID_BODY', message });
const NOT_AN_ADDRESS = bad("'email' must be an email address");
const PASSWORD_LENGTH = bad("'password' must be 8 to 1024 characters long");
const NOT_AN_OBJECT = bad("Request body must be a JSON object with 'email' and 'password'");

describe('parseCredentials', () => {
  test.each([
    ['ann@example.com', 'ann@example.com'],
    ['  Ann.Lee+tag@Example.COM ', 'ann.lee+tag@example.com'],
    ['zoë@bücher.example', 'zoë@bücher.example'],
    ["o'brien@sub.example.co.uk", "o'brien@sub.example.co.uk"],
  ])('accepts %j as %j (trimmed, lower-cased)', (email, normalized) => {
    expect(parseCredentials({ email, password: 'correct horse' })).toEqual({
      email: normalized,
      password: 'correct horse',
    });
  });

  test('keeps the password exactly as sent (no trimming)', () => {
    expect(parseCredentials({ email: 'a@b.co', password: '  spaced  ' }).password).toBe(
      '  spaced  ',
    );
  });

  test('accepts the boundary lengths: 254-character email, 8 and 1024-character passwords', () => {
    const email = `${'a'.repeat(64)}@${'b'.repeat(185)}.com`;
    expect(email).toHaveLength(254);
    expect(parseCredentials({ email, password: '12345678' }).email).toBe(email);
    expect(parseCredentials({ email, password: 'p'.repeat(1024) }).password).toHaveLength(1024);
    // Lengths are characters, not UTF-16 units or bytes: 8 emoji are 8 characters.
    expect(parseCredentials({ email, password: '🔑'.repeat(8) }).password).toBe('🔑'.repeat(8));
  });

  test.each<[string, unknown, ReturnType<typeof bad>]>([
    ['no @', { email: 'not-an-email', password: 'password1' }, NOT_AN_ADDRESS],
    ['no dot in the domain', { email: 'ann@localhost', password: 'password1' }, NOT_AN_ADDRESS],
    ['two @', { email: 'a@b@example.com', password: 'password1' }, NOT_AN_ADDRESS],
    ['a space inside', { email: 'a b@example.com', password: 'password1' }, NOT_AN_ADDRESS],
    ['empty local part', { email: '@example.com', password: 'password1' }, NOT_AN_ADDRESS],
    ['empty domain label', { email: 'a@example..com', password: 'password1' }, NOT_AN_ADDRESS],
    ['trailing dot', { email: 'a@example.com.', password: 'password1' }, NOT_AN_ADDRESS],
    ['display-name form', { email: 'Ann <a@example.com>', password: 'password1' }, NOT_AN_ADDRESS],
    [
      'a control character',
      { email: 'a\u0000@example.com', password: 'password1' },
      NOT_AN_ADDRESS,
    ],
    [
      'local part over 64',
      { email: `${'a'.repeat(65)}@example.com`, password: 'password1' },
      NOT_AN_ADDRESS,
    ],
    ['empty email', { email: '', password: 'password1' }, NOT_AN_ADDRESS],
    [
      'email over 254 characters',
      { email: `a@${'b'.repeat(250)}.com`, password: 'password1' },
      bad("'email' must be at most 254 characters"),
    ],
    ['7-character password', { email: 'a@b.co', password: '1234567' }, PASSWORD_LENGTH],
    ['1025-character password', { email: 'a@b.co', password: 'p'.repeat(1025) }, PASSWORD_LENGTH],
    ['empty password', { email: 'a@b.co', password: '' }, PASSWORD_LENGTH],
    ['missing email', { password: 'password1' }, bad("'email' is required")],
    ['missing password', { email: 'a@b.co' }, bad("'password' is required")],
    ['numeric email', { email: 42, password: 'password1' }, bad("'email' must be a string")],
    ['null email', { email: null, password: 'password1' }, bad("'email' must be a string")],
    [
      'array password',
      { email: 'a@b.co', password: ['password1'] },
      bad("'password' must be a string"),
    ],
    [
      'object password',
      { email: 'a@b.co', password: { p: 1 } },
      bad("'password' must be a string"),
    ],
    [
      'numeric password',
      { email: 'a@b.co', password: 12345678 },
      bad("'password' must be a string"),
    ],
    ['an array body', [{ email: 'a@b.co', password: 'password1' }], NOT_AN_OBJECT],
    ['a string body', 'a@b.co:password1', NOT_AN_OBJECT],
    ['a null body', null, NOT_AN_OBJECT],
    ['no body', undefined, NOT_AN_OBJECT],
  ])('refuses %s with 400', (_name, body, expected) => {
    expect(failure(body)).toEqual(expected);
  });
});

describe('normalizeEmail', () => {
  test('trims and lower-cases, so register and login agree whatever the case', () => {
    expect(normalizeEmail(' ANN@Example.Com\t')).toBe('ann@example.com');
    expect(normalizeEmail('ÄNN@EXAMPLE.COM')).toBe('änn@example.com');
  });
});

describe('hashPassword', () => {
  test('uses argon2id with at least the OWASP minimum (m=19 MiB, t=2, p=1)', () => {
    expect(ARGON2_OPTIONS.memoryCost).toBeGreaterThanOrEqual(19_456);
    expect(ARGON2_OPTIONS.timeCost).toBeGreaterThanOrEqual(2);
    expect(ARGON2_OPTIONS.parallelism).toBeGreaterThanOrEqual(1);
  });

  test('returns a salted argon2id PHC string that verifies the password and nothing else', async () => {
    const [first, second] = await Promise.all([
      hashPassword('correct horse'),
      hashPassword('correct horse'),
    ]);
    expect(first).toMatch(
      /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/,
    );
    expect(first.length).toBeLessThanOrEqual(255);
    expect(first).not.toBe(second);
    expect(first).not.toContain('correct horse');
    expect(await verify(first, 'correct horse')).toBe(true);
    expect(await verify(first, 'correct horsE')).toBe(false);
  });
});
