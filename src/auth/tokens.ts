/**
 * The gateway's own access tokens, for the users of `users_created_by_tablegate`: JWT HS256 with
 * claims `sub` (user id), `email`, `role`, `pwv` (the password version, auth/users.ts), `iat` and
 * `exp`, signed and verified with jose. Owns the secret (`--jwt-secret`, or one generated once
 * and kept in `<stateDir>/jwt-secret`, mode 0600). Verification pins HS256, so `none`, HS512 and
 * RS256 fail; which verifier a token reaches is auth/authenticator.ts's choice.
 */
import { createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { chmod, link, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { jwtVerify, SignJWT } from 'jose';
import { preparePrivateDirectory } from '../state-dir.js';

/** RFC 7518 §3.2: an HS256 key must be at least as long as the hash output. */
export const MIN_SECRET_BYTES = 32;
export const SECRET_FILE = 'jwt-secret';
export const OWN_ALGORITHM = 'HS256';

/** What a verified token says; put on the request by the guard. */
export interface AuthClaims {
  /** The user's id: BIGINT UNSIGNED as text, or the provider's `--user-id-claim`. */
  readonly sub: string;
  /** '' when a provider's token has no `--email-claim`. */
  readonly email: string;
  /** The role the token gives (docs/policies.md); the policy decides what it may do. */
  readonly role: string;
  readonly exp: number;
  /** `nbf`, or 0 when the token has none. */
  readonly nbf: number;
  /** The password version an own token was signed with; null for a provider's token. */
  readonly passwordVersion: string | null;
}

/** The user an own token is signed for. */
export interface TokenSubject {
  readonly id: string;
  readonly email: string;
  readonly role: string;
  readonly passwordVersion: string;
}

function codeOf(error: unknown): string | undefined {
  return (error as { code?: string }).code;
}

async function readSecretFile(file: string): Promise<string | null> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Writes a new secret unless another process got there first. The secret is written to a
 * private temporary file and hard-linked into place, so a reader never sees a half-written
 * file and two instances starting at once agree on one secret (the loser's link fails EEXIST).
 */
async function createSecretFile(stateDir: string, file: string): Promise<void> {
  await preparePrivateDirectory(stateDir);
  const secret = randomBytes(MIN_SECRET_BYTES).toString('base64url');
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(temporary, file);
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return;
    // A file system without hard links: an exclusive create is still safe against overwriting.
    await writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' }).catch((again: unknown) => {
      if (codeOf(again) !== 'EEXIST') throw again;
    });
  } finally {
    await rm(temporary, { force: true });
  }
}

function byteLength(secret: string): number {
  return Buffer.byteLength(secret, 'utf8');
}

/**
 * The HS256 secret: the configured one (at least 32 bytes), else the one in
 * `<stateDir>/jwt-secret`, generated on first run (32 random bytes, base64url) and reused after.
 * Throws an Error whose message is fit for the start-up line, never containing the secret.
 */
export async function loadJwtSecret(configured: string | null, stateDir: string): Promise<string> {
  if (configured !== null) {
    const bytes = byteLength(configured);
    if (bytes < MIN_SECRET_BYTES) {
      throw new Error(
        `the JWT secret (--jwt-secret / TABLEGATE_JWT_SECRET) must be at least ${MIN_SECRET_BYTES} bytes; it is ${bytes}`,
      );
    }
    return configured;
  }
  const file = path.join(stateDir, SECRET_FILE);
  let secret = await readSecretFile(file);
  if (secret === null) {
    await createSecretFile(stateDir, file);
    secret = await readSecretFile(file);
  }
  if (secret === null || byteLength(secret) < MIN_SECRET_BYTES) {
    throw new Error(
      `${file} holds fewer than ${MIN_SECRET_BYTES} bytes; delete it to generate a new secret`,
    );
  }
  // Kept private even if someone loosened it by hand.
  if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, 0o600);
  return secret;
}

function isOwnPayload(payload: Record<string, unknown>): payload is {
  sub: string;
  email: string;
  role: string;
  pwv: string;
  exp: number;
  nbf?: unknown;
} {
  const { sub, email, role, pwv, exp } = payload;
  return (
    typeof sub === 'string' &&
    sub !== '' &&
    typeof email === 'string' &&
    // A token from before roles, or before password versions, has none: its holder logs in again.
    typeof role === 'string' &&
    typeof pwv === 'string' &&
    typeof exp === 'number'
  );
}

export class OwnTokens {
  /** A KeyObject, made once: jose would otherwise import the secret again on every call. */
  private readonly key: KeyObject;

  constructor(
    secret: string,
    /** `--token-ttl` in seconds. */
    private readonly lifetimeSeconds: number,
  ) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  static async open(config: {
    readonly jwtSecret: string | null;
    readonly stateDir: string;
    readonly tokenTtlSeconds: number;
  }): Promise<OwnTokens> {
    return new OwnTokens(
      await loadJwtSecret(config.jwtSecret, config.stateDir),
      config.tokenTtlSeconds,
    );
  }

  /** The secret's own key, for what else the gateway signs with it (file links). */
  get secretKey(): KeyObject {
    return this.key;
  }

  sign(user: TokenSubject): Promise<string> {
    const issuedAt = Math.floor(Date.now() / 1000);
    return new SignJWT({ email: user.email, role: user.role, pwv: user.passwordVersion })
      .setProtectedHeader({ alg: OWN_ALGORITHM, typ: 'JWT' })
      .setSubject(user.id)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + this.lifetimeSeconds)
      .sign(this.key);
  }

  /**
   * The claims of a valid, unexpired HS256 token signed with our secret. Throws jose's errors:
   * JWTExpired only once the signature is known good, so a forged token never counts as expired.
   */
  async verify(token: string): Promise<AuthClaims> {
    const { payload } = await jwtVerify(token, this.key, {
      algorithms: [OWN_ALGORITHM],
      // jose checks `exp` only when present; a token without one must not live forever.
      requiredClaims: ['exp', 'iat'],
    });
    if (!isOwnPayload(payload)) throw new InvalidClaims();
    return Object.freeze({
      sub: payload.sub,
      email: payload.email,
      role: payload.role,
      exp: payload.exp,
      nbf: typeof payload.nbf === 'number' ? payload.nbf : 0,
      passwordVersion: payload.pwv,
    });
  }
}

/** A token whose signature is good but whose claims are not what the gateway needs. */
export class InvalidClaims extends Error {
  override readonly name = 'InvalidClaims';
}
