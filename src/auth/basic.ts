/**
 * `Authorization: Basic base64(email:password)` of an own user, for BI tools that cannot send a
 * bearer token (Excel, Power BI): accepted on `/odata/` routes only (auth/guard.ts), checked as
 * a login is — counted before the password is checked, argon2 through the same bounded queue,
 * the same 401 `INVALID_CREDENTIALS` and 429 (the login limits, shared with `/auth/login`).
 * A verified credential is remembered for BASIC_CREDENTIAL_TTL_MS, keyed by an HMAC of the
 * header under a key of this process (never the password itself), as the own token it was
 * given: each use checks that token as any Bearer token is checked, so a user removed, given
 * another role or a new password is refused within the revocation bound (auth/user-states.ts)
 * and the credential is verified again. So argon2 runs once per credential per TTL, not per
 * request.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createLRU } from 'lru.min';
import { accessDenied, invalidCredentials } from '../errors.js';
import { BASIC_CREDENTIAL_TTL_MS, BASIC_CREDENTIALS } from '../limits.js';
import type { Authenticator } from './authenticator.js';
import type { AuthLimits } from './limits.js';
import type { AuthClaims, OwnTokens } from './tokens.js';
import type { UserStates } from './user-states.js';
import type { UserStore } from './users.js';

const BASIC = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/** Whether a header is a Basic credential (the scheme matched case-insensitively, RFC 7617). */
export const isBasic = (header: string | undefined): header is string =>
  header !== undefined && /^basic /i.test(header);

interface Remembered {
  readonly token: string;
  readonly until: number;
}

export class BasicCredentials {
  private readonly remembered = createLRU<string, Remembered>({ max: BASIC_CREDENTIALS });
  private readonly key = randomBytes(32);

  constructor(
    private readonly users: UserStore,
    private readonly tokens: OwnTokens,
    private readonly states: UserStates,
    private readonly authenticator: Authenticator,
    private readonly limits: AuthLimits,
  ) {}

  private keyOf(header: string): string {
    return createHmac('sha256', this.key).update(header).digest('base64url');
  }

  /** The claims of a credential verified lately and still good, else undefined (synchronous). */
  known(header: string): AuthClaims | undefined {
    const key = this.keyOf(header);
    const entry = this.remembered.get(key);
    if (entry === undefined) return undefined;
    const claims = Date.now() < entry.until ? this.authenticator.known(entry.token) : undefined;
    if (claims === undefined) this.remembered.delete(key);
    return claims;
  }

  /** Verifies the credential as a login; throws the login's 401 or 429. */
  async authenticate(header: string, ip: string): Promise<AuthClaims> {
    const encoded = BASIC.exec(header)?.[1];
    if (encoded === undefined) throw accessDenied();
    const text = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = text.indexOf(':');
    if (colon <= 0) throw accessDenied();
    const credentials = { email: text.slice(0, colon), password: text.slice(colon + 1) };
    const attempt = await this.limits.beginLogin(ip, credentials.email);
    const startedAt = Date.now();
    let user: Awaited<ReturnType<UserStore['authenticate']>>;
    try {
      user = await this.limits.hashing(ip, () => this.users.authenticate(credentials));
    } catch (error) {
      // Refused by the queue or MySQL down: no password was checked, nothing to count.
      await attempt.succeeded();
      throw error;
    }
    if (!user) throw invalidCredentials();
    await attempt.succeeded();
    this.states.remember(user.id, user, startedAt);
    const token = await this.tokens.sign(user);
    const claims = await this.authenticator.authenticate(token);
    this.remembered.set(this.keyOf(header), { token, until: Date.now() + BASIC_CREDENTIAL_TTL_MS });
    return claims;
  }
}
