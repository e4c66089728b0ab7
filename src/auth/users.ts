/**
 * The users of auth mode: the `users_created_by_tablegate` table (created, or given its `role`
 * column, only when missing), credential rules and normalization, argon2id hashing, and the
 * queries register, login and `tablegate user` need. A password exists in clear only in the
 * request body (or the CLI's input) and here, never in a log or a column.
 */
import { Algorithm, hash, verify } from '@node-rs/argon2';
import { USERS_TABLE } from '../db/schema.js';
import { invalidBody, userExists, wrongPassword } from '../errors.js';
import type { Database } from '../execute/database.js';
import { EMAIL_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../limits.js';
import type { UserState } from './user-states.js';

/** The users table's `role VARCHAR(64) NOT NULL DEFAULT 'user'` (docs/policies.md). */
export const ROLE_MAX_LENGTH = 64;
export const DEFAULT_ROLE = 'user';

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
  role VARCHAR(${ROLE_MAX_LENGTH}) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '${DEFAULT_ROLE}',
  created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  UNIQUE KEY email (email)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`;

/**
 * The column added in place to a table from a release before roles. `ADD COLUMN IF NOT EXISTS`
 * (MariaDB) is not MySQL, so a race between two instances is settled by ER_DUP_FIELDNAME.
 * InnoDB adds a column with a constant default in place (ALGORITHM=INSTANT on MySQL 8 and
 * MariaDB 10.3+): every row keeps its data and gets the default role.
 */
const ADD_ROLE_COLUMN = `ALTER TABLE \`${USERS_TABLE}\` ADD COLUMN role VARCHAR(${ROLE_MAX_LENGTH}) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '${DEFAULT_ROLE}' AFTER password`;

/**
 * A token's password version (`pwv`): the first 16 hex digits of SHA-256 over the stored argon2
 * PHC string. The salt is new with every hash, so a new password — even the same one again —
 * gives a new version, and tokens signed before it stop working (auth/user-states.ts). Computed
 * by MySQL, so the hashes never leave it for this, and one expression serves every reader.
 */
const PASSWORD_VERSION = 'LEFT(SHA2(password, 256), 16)';

/** What register, login and the user CLI read and write; a foreign table of our name must have them. */
const USED_COLUMNS = ['id', 'email', 'password', 'role'];

async function presentColumns(db: Database): Promise<Set<string>> {
  const rows = await db.rows<{ COLUMN_NAME: string }>({
    sql: 'SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
    params: [USERS_TABLE],
  });
  return new Set(rows.map((row) => String(row.COLUMN_NAME).toLowerCase()));
}

/**
 * Makes the users table right, touching it only when it is not: created when missing, given its
 * `role` column when that is missing. A table that is already right needs nothing but SELECT on
 * information_schema, so a MySQL user without CREATE/ALTER can (re)start the gateway. `IF NOT
 * EXISTS` keeps several instances starting at once harmless (DDL waits on the metadata lock).
 */
export async function ensureUsersTable(db: Database): Promise<void> {
  let present = await presentColumns(db);
  if (present.size === 0) {
    await db.run({ sql: CREATE_USERS_TABLE, params: [] });
    present = await presentColumns(db);
  }
  // Only a table of ours from before roles is altered; a foreign one is reported below.
  const ours = ['id', 'email', 'password'].every((column) => present.has(column));
  if (ours && !present.has('role')) {
    try {
      await db.run({ sql: ADD_ROLE_COLUMN, params: [] });
    } catch (error) {
      if ((error as { code?: string }).code !== 'ER_DUP_FIELDNAME') throw error;
    }
    present = await presentColumns(db);
  }
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
  checkPasswordLength('password', password);
  return { email: normalized, password };
}

function checkPasswordLength(field: string, password: string): void {
  const length = characters(password);
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    throw invalidBody(
      `'${field}' must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters long`,
    );
  }
}

export interface PasswordChange {
  readonly oldPassword: string;
  readonly newPassword: string;
}

/** The body of `POST /auth/password` → PasswordChange, or a 400 naming what is wrong. */
export function parsePasswordChange(body: unknown): PasswordChange {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidBody("Request body must be a JSON object with 'old_password' and 'new_password'");
  }
  const fields = body as Record<string, unknown>;
  for (const field of ['old_password', 'new_password']) {
    if (fields[field] === undefined) throw invalidBody(`'${field}' is required`);
    if (typeof fields[field] !== 'string') throw invalidBody(`'${field}' must be a string`);
  }
  const oldPassword = fields.old_password as string;
  const newPassword = fields.new_password as string;
  // The old one is checked against the hash, not its length: any text is simply not it.
  if (characters(oldPassword) > PASSWORD_MAX_LENGTH) throw wrongPassword();
  checkPasswordLength('new_password', newPassword);
  return { oldPassword, newPassword };
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

export interface User {
  /** BIGINT UNSIGNED, as text. */
  readonly id: string;
  readonly email: string;
  readonly role: string;
}

/** A user as a token is signed for: with the version of their password (PASSWORD_VERSION). */
export interface SignedInUser extends User {
  readonly passwordVersion: string;
}

export interface ListedUser extends User {
  /** `YYYY-MM-DD HH:MM:SS` as MySQL shows it. */
  readonly createdAt: string;
}

/** A role as `--default-role` and `tablegate user … --role` take it: 1–64 characters, no control characters. */
export function roleProblem(role: string): string | null {
  const length = characters(role);
  if (length === 0 || length > ROLE_MAX_LENGTH) {
    return `a role is 1 to ${ROLE_MAX_LENGTH} characters long`;
  }
  if (/[\p{Cc}\s]/u.test(role)) return 'a role holds no spaces or control characters';
  return null;
}

export class UserStore {
  private constructor(
    private readonly db: Database,
    /** Verified against when the email is unknown, so both failures cost one argon2 verify. */
    private readonly dummyHash: string,
    /** The role of a user made by `register` (`--default-role`). */
    private readonly defaultRole: string,
  ) {}

  /** Computes the dummy hash once; the table must exist (ensureUsersTable). */
  static async open(db: Database, defaultRole: string = DEFAULT_ROLE): Promise<UserStore> {
    return new UserStore(
      db,
      await hashPassword('tablegate dummy password, never matches'),
      defaultRole,
    );
  }

  /**
   * Inserts the user with the default role (a body never chooses it); a taken email is found by
   * the unique key, not by a racy SELECT first.
   */
  register(credentials: Credentials): Promise<User> {
    return this.add(credentials, this.defaultRole);
  }

  /** Inserts a user with the given role (`tablegate user add`). */
  async add({ email, password }: Credentials, role: string): Promise<User> {
    const passwordHash = await hashPassword(password);
    try {
      const result = await this.db.run({
        sql: `INSERT INTO \`${USERS_TABLE}\` (email, password, role) VALUES (?, ?, ?)`,
        params: [email, passwordHash, role],
      });
      return { id: String(result.insertId), email, role };
    } catch (error) {
      if ((error as { code?: string }).code === 'ER_DUP_ENTRY') throw userExists();
      throw error;
    }
  }

  /** The user when email and password match, null otherwise — in the same time either way. */
  async authenticate({ email, password }: Credentials): Promise<SignedInUser | null> {
    const rows = await this.db.rows<{
      id: unknown;
      password: unknown;
      role: unknown;
      pwv: unknown;
    }>({
      sql: `SELECT id, password, role, ${PASSWORD_VERSION} AS pwv FROM \`${USERS_TABLE}\` WHERE email = ?`,
      params: [email],
    });
    const row = rows[0];
    const stored = row ? String(row.password) : this.dummyHash;
    const matches = await verify(stored, password).catch(() => false);
    return row && matches
      ? { id: String(row.id), email, role: String(row.role), passwordVersion: String(row.pwv) }
      : null;
  }

  /**
   * `POST /auth/password`: the user with this id gets the new password if the old one is theirs.
   * Null when it is not (or the user is gone); else the user as a new token is signed for.
   */
  async changePassword(
    id: string,
    oldPassword: string,
    newPassword: string,
  ): Promise<SignedInUser | null> {
    const rows = await this.db.rows<{ password: unknown }>({
      sql: `SELECT password FROM \`${USERS_TABLE}\` WHERE id = ?`,
      params: [id],
    });
    const row = rows[0];
    const stored = row ? String(row.password) : this.dummyHash;
    const matches = await verify(stored, oldPassword).catch(() => false);
    if (!row || !matches) return null;
    const passwordHash = await hashPassword(newPassword);
    // Only over the hash just checked: of two changes at once, the second finds it gone.
    const result = await this.db.run({
      sql: `UPDATE \`${USERS_TABLE}\` SET password = ? WHERE id = ? AND password = ?`,
      params: [passwordHash, id, stored],
    });
    if (result.affectedRows === 0) return null;
    return this.signedIn(id);
  }

  /** The user with this id as a token is signed for, or null when there is none. */
  private async signedIn(id: string): Promise<SignedInUser | null> {
    const rows = await this.db.rows<Record<string, unknown>>({
      sql: `SELECT id, email, role, ${PASSWORD_VERSION} AS pwv FROM \`${USERS_TABLE}\` WHERE id = ?`,
      params: [id],
    });
    const row = rows[0];
    return row
      ? {
          id: String(row.id),
          email: String(row.email),
          role: String(row.role),
          passwordVersion: String(row.pwv),
        }
      : null;
  }

  /** The role and password version of each of these users that exists (auth/user-states.ts). */
  async states(ids: readonly string[]): Promise<Map<string, UserState>> {
    const states = new Map<string, UserState>();
    // Only ids a verified token carried reach here, but the column is BIGINT UNSIGNED: another
    // text can name no user, and must not be converted by MySQL into one that does.
    const numeric = ids.filter((id) => /^\d{1,20}$/.test(id));
    if (numeric.length === 0) return states;
    const rows = await this.db.rows<Record<string, unknown>>({
      sql: `SELECT id, role, ${PASSWORD_VERSION} AS pwv FROM \`${USERS_TABLE}\` WHERE id IN (${numeric.map(() => '?').join(', ')})`,
      params: numeric,
    });
    for (const row of rows) {
      states.set(String(row.id), { role: String(row.role), passwordVersion: String(row.pwv) });
    }
    return states;
  }

  /** `tablegate user set-password`: false when no user has that email. */
  async setPassword(email: string, password: string): Promise<boolean> {
    const result = await this.db.run({
      sql: `UPDATE \`${USERS_TABLE}\` SET password = ? WHERE email = ?`,
      params: [await hashPassword(password), normalizeEmail(email)],
    });
    return result.affectedRows > 0;
  }

  /** Each role users have, with how many have it (the start-up check against the policy). */
  async roleCounts(): Promise<Map<string, number>> {
    const rows = await this.db.rows<{ role: unknown; users: unknown }>({
      sql: `SELECT role, COUNT(*) AS users FROM \`${USERS_TABLE}\` GROUP BY role ORDER BY role`,
      params: [],
    });
    return new Map(rows.map((row) => [String(row.role), Number(row.users)]));
  }

  /** False when no user has that email. */
  async setRole(email: string, role: string): Promise<boolean> {
    const result = await this.db.run({
      sql: `UPDATE \`${USERS_TABLE}\` SET role = ? WHERE email = ?`,
      params: [role, normalizeEmail(email)],
    });
    return result.affectedRows > 0;
  }

  /** False when no user has that email. */
  async remove(email: string): Promise<boolean> {
    const result = await this.db.run({
      sql: `DELETE FROM \`${USERS_TABLE}\` WHERE email = ?`,
      params: [normalizeEmail(email)],
    });
    return result.affectedRows > 0;
  }

  /** Every user, oldest first; never a password hash. */
  async list(): Promise<ListedUser[]> {
    const rows = await this.db.rows<Record<string, unknown>>({
      sql: `SELECT id, email, role, CAST(created_at AS CHAR) AS created_at FROM \`${USERS_TABLE}\` ORDER BY id`,
      params: [],
    });
    return rows.map((row) => ({
      id: String(row.id),
      email: String(row.email),
      role: String(row.role),
      createdAt: String(row.created_at),
    }));
  }
}
