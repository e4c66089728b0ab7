/**
 * Access tokens: JWT HS256 with claims `sub` (user id), `email`, `role`, `iat`, `exp`. Owns the secret
 * (`--jwt-secret`, or one generated once and kept in `<stateDir>/jwt-secret`, mode 0600) and the
 * two operations on tokens. Verification pins the algorithm, so `none`, HS512 and RS256 fail.
 */
import { createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { chmod, link, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import { createLRU } from 'lru.min';
import { VERIFIED_TOKENS } from '../limits.js';
import { preparePrivateDirectory } from '../state-dir.js';

/** RFC 7518 §3.2: an HS256 key must be at least as long as the hash output. */
export const MIN_SECRET_BYTES = 32;
export const SECRET_FILE = 'jwt-secret';
const ALGORITHM = 'HS256';

/** What a verified token says; put on the request by the guard. */
export interface AuthClaims {
  /** The user's id (BIGINT UNSIGNED as text). */
  readonly sub: string;
  readonly email: string;
  /** The user's role when the token was issued (CONTRACT §6); the policy decides what it may do. */
  readonly role: string;
  readonly iat: number;
  readonly exp: number;
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

/**
 * `--token-ttl` → jsonwebtoken's `expiresIn`. A bare number means seconds (jsonwebtoken would
 * read the string "3600" as milliseconds); anything else is an `ms` duration like `1h`.
 */
export function parseTokenTtl(ttl: string): number | string {
  const text = ttl.trim();
  return /^\d+$/.test(text) ? Number(text) : text;
}

function isClaims(payload: unknown): payload is AuthClaims {
  if (typeof payload !== 'object' || payload === null) return false;
  const { sub, email, role, iat, exp } = payload as Record<string, unknown>;
  return (
    typeof sub === 'string' &&
    sub !== '' &&
    typeof email === 'string' &&
    // A token from before roles has none: its holder logs in again (one --token-ttl at most).
    typeof role === 'string' &&
    typeof iat === 'number' &&
    // jsonwebtoken checks `exp` only when present; a token without one must not live forever.
    typeof exp === 'number'
  );
}

export class TokenService {
  /**
   * A KeyObject, not the string: given a string, jsonwebtoken first tries it as a PEM public key
   * and pays for the failed parse on every call (about 0.7 ms against 0.02 ms, measured).
   */
  private readonly key: KeyObject;
  /**
   * Claims of tokens verify() accepted, by the whole token text (issue 17: jsonwebtoken's verify
   * is ~20 µs, most of an authenticated read's own work). Exact: the key never changes, so a
   * token text that verified once verifies again, but for what depends on the time: `exp`, which
   * each use checks as jsonwebtoken does, and `nbf`, so a token that has one is not kept.
   */
  private readonly verified = createLRU<string, AuthClaims>({ max: VERIFIED_TOKENS });

  private constructor(
    secret: string,
    private readonly expiresIn: number | string,
  ) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  /** Throws when the lifetime is not a positive duration of at least one second. */
  static create(secret: string, tokenTtl: string): TokenService {
    const service = new TokenService(secret, parseTokenTtl(tokenTtl));
    let lifetime = Number.NaN;
    try {
      const probe = jwt.decode(service.sign({ id: '0', email: '', role: '' })) as AuthClaims;
      lifetime = probe.exp - probe.iat;
    } catch {
      // Not a duration jsonwebtoken understands.
    }
    if (!(lifetime >= 1)) {
      throw new Error(`--token-ttl '${tokenTtl}' is not a duration like 1h, 30m or 3600 (seconds)`);
    }
    return service;
  }

  static async open(config: {
    readonly jwtSecret: string | null;
    readonly stateDir: string;
    readonly tokenTtl: string;
  }): Promise<TokenService> {
    return TokenService.create(
      await loadJwtSecret(config.jwtSecret, config.stateDir),
      config.tokenTtl,
    );
  }

  sign(user: { readonly id: string; readonly email: string; readonly role: string }): string {
    return jwt.sign({ email: user.email, role: user.role }, this.key, {
      algorithm: ALGORITHM,
      subject: user.id,
      expiresIn: this.expiresIn as jwt.SignOptions['expiresIn'],
    });
  }

  /** The claims of a valid, unexpired HS256 token signed with our secret; null otherwise. */
  verify(token: string): AuthClaims | null {
    const known = this.verified.get(token);
    if (known !== undefined) {
      // jsonwebtoken: expired once the clock, in whole seconds, has reached `exp`.
      if (Math.floor(Date.now() / 1000) < known.exp) return known;
      this.verified.delete(token);
      return null;
    }
    let payload: unknown;
    try {
      payload = jwt.verify(token, this.key, { algorithms: [ALGORITHM] });
    } catch {
      return null;
    }
    if (!isClaims(payload)) return null;
    const claims: AuthClaims = Object.freeze({
      sub: payload.sub,
      email: payload.email,
      role: payload.role,
      iat: payload.iat,
      exp: payload.exp,
    });
    if (!('nbf' in payload)) this.verified.set(token, claims);
    return claims;
  }

  /**
   * True when a token verify() refused is ours but past its `exp`: jsonwebtoken checks the
   * algorithm and signature before the expiry, so a forged token never counts as expired.
   */
  expired(token: string): boolean {
    try {
      jwt.verify(token, this.key, { algorithms: [ALGORITHM] });
      return false;
    } catch (error) {
      return error instanceof jwt.TokenExpiredError;
    }
  }
}
