/**
 * The users of auth mode: the `users_created_by_tablegate` table (created if missing), credential
 * rules and normalization, argon2id hashing, and the two queries register and login need.
 * A password exists in clear only in the request body and here, never in a log or a column.
 */
import { Algorithm, hash, verify } from '@node-rs/argon2';
import { USERS_TABLE } from '../db/schema.js';
import { invalidBody, userExists } from '../errors.js';
import type { Database } from '../execute/database.js';
import { EMAIL_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../limits.js';

/**
 * OWASP Password Storage Cheat Sheet, first argon2id option: m=19 MiB, t=2, p=1.
 * Parameters travel in each PHC string, so raising them later still verifies old hashes.
 */
export const ARGON2_OPTIONS = {
  algorithm: Algorithm.Argon2id,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

/**
 * utf8mb4_bin: emails are lower-cased before they reach SQL, and a case- or accent-insensitive
 * collation would let `jörg@x.org` collide with `jorg@x.org`.
 */
const CREATE_USERS_TABLE = `CREATE TABLE IF NOT EXISTS \`${USERS_TABLE}\` (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  email VARCHAR(${EMAIL_MAX_LENGTH}) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  password VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  UNIQUE KEY email (email)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`;

/** What register and login read and write; a foreign table of our name must have them. */
const USED_COLUMNS = ['id', 'email', 'password'];

/**
 * Creates the users table if it is missing. `IF NOT EXISTS` makes a restart and several
 * instances starting at once harmless (the server serializes DDL on the table's metadata lock).
 * A table of that name made by someone else must still have the columns we use.
 */
export async function ensureUsersTable(db: Database): Promise<void> {
  await db.run({ sql: CREATE_USERS_TABLE, params: [] });
  const rows = await db.rows<{ COLUMN_NAME: string }>({
    sql: 'SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
    params: [USERS_TABLE],
  });
  const present = new Set(rows.map((row) => String(row.COLUMN_NAME).toLowerCase()));
  const missing = USED_COLUMNS.filter((column) => !present.has(column));
  if (missing.length > 0) {
    throw new Error(`a table of that name exists without the column(s) ${missing.join(', ')}`);
  }
}

export interface Credentials {
  /** Trimmed and lower-cased. */
  readonly email: string;
  readonly password: string;
}

/** Lengths in characters (code points), as VARCHAR counts them. */
function characters(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/**
 * "Looks like an address": one `@`, a local part of 1–64 characters (RFC 5321), a domain of at
 * least two dot-separated non-empty labels; no whitespace, control characters or the specials
 * that only quoted local parts may hold (RFC 5322 §3.2.3). Unicode letters are fine (RFC 6531).
 */
const EMAIL_SHAPE =
  /^[^\s\p{Cc}@<>()[\]\\,;:"]{1,64}@[^\s\p{Cc}@<>()[\]\\,;:".]+(?:\.[^\s\p{Cc}@<>()[\]\\,;:".]+)+$/u;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The body of register and login → Credentials, or a 400 naming what is wrong. */
export function parseCredentials(body: unknown): Credentials {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidBody("Request body must be a JSON object with 'email' and 'password'");
  }
  const { email, password } = body as Record<string, unknown>;
  if (email === undefined) throw invalidBody("'email' is required");
  if (typeof email !== 'string') throw invalidBody("'email' must be a string");
  if (password === undefined) throw invalidBody("'password' is required");
  if (typeof password !== 'string') throw invalidBody("'password' must be a string");
  const normalized = normalizeEmail(email);
  if (characters(normalized) > EMAIL_MAX_LENGTH) {
    throw invalidBody(`'email' must be at most ${EMAIL_MAX_LENGTH} characters`);
  }
  if (!EMAIL_SHAPE.test(normalized)) throw invalidBody("'email' must be an email address");
  const length = characters(password);
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    throw invalidBody(
      `'password' must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters long`,
    );
  }
  return { email: normalized, password };
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

export interface User {
  /** BIGINT UNSIGNED, as text. */
  readonly id: string;
  readonly email: string;
}

export class UserStore {
  private constructor(
    private readonly db: Database,
    /** Verified against when the email is unknown, so both failures cost one argon2 verify. */
    private readonly dummyHash: string,
  ) {}

  /** Computes the dummy hash once; the table must exist (ensureUsersTable). */
  static async open(db: Database): Promise<UserStore> {
    return new UserStore(db, await hashPassword('tablegate dummy password, never matches'));
  }

  /** Inserts the user; a taken email is found by the unique key, not by a racy SELECT first. */
  async register({ email, password }: Credentials): Promise<User> {
    const passwordHash = await hashPassword(password);
    try {
      const result = await this.db.run({
        sql: `INSERT INTO \`${USERS_TABLE}\` (email, password) VALUES (?, ?)`,
        params: [email, passwordHash],
      });
      return { id: String(result.insertId), email };
    } catch (error) {
      if ((error as { code?: string }).code === 'ER_DUP_ENTRY') throw userExists();
      throw error;
    }
  }

  /** The user when email and password match, null otherwise — in the same time either way. */
  async authenticate({ email, password }: Credentials): Promise<User | null> {
    const rows = await this.db.rows<{ id: unknown; password: unknown }>({
      sql: `SELECT id, password FROM \`${USERS_TABLE}\` WHERE email = ?`,
      params: [email],
    });
    const row = rows[0];
    const stored = row ? String(row.password) : this.dummyHash;
    const matches = await verify(stored, password).catch(() => false);
    return row && matches ? { id: String(row.id), email } : null;
  }
}
