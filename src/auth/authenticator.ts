/**
 * Who a Bearer token says the caller is. A token goes to the verifier of its own algorithm's
 * family and to no other: HS256 to the gateway's own secret (auth/tokens.ts), RS256, ES256 and
 * EdDSA to the identity provider's keys when one is configured (auth/provider-tokens.ts);
 * anything else (`none`, HS512, PS256…) is refused unread. An own token must also still match
 * its user (auth/user-states.ts). Verified tokens are remembered, so a token seen before costs
 * a map lookup and two comparisons: the guard's synchronous fast path.
 */
import { decodeProtectedHeader, errors } from 'jose';
import { createLRU } from 'lru.min';
import { accessDenied, identityProviderUnavailable, tokenExpired } from '../errors.js';
import { PROVIDER_CLOCK_TOLERANCE_SECONDS, VERIFIED_TOKENS } from '../limits.js';
import { KeysUnavailable, PROVIDER_ALGORITHMS } from './provider-keys.js';
import type { ProviderTokens } from './provider-tokens.js';
import { type AuthClaims, OWN_ALGORITHM, type OwnTokens } from './tokens.js';
import type { UserStates } from './user-states.js';

interface Verified {
  readonly claims: AuthClaims;
  /** Date.now() bounds within which the token's `nbf` and `exp` hold, as jose checks them. */
  readonly from: number;
  readonly until: number;
}

const PROVIDER_ALGORITHM_SET: ReadonlySet<string> = new Set(PROVIDER_ALGORITHMS);

/** The algorithm a token's header names, or null when it has no readable header. */
function algorithmOf(token: string): string | null {
  try {
    const { alg } = decodeProtectedHeader(token);
    return typeof alg === 'string' ? alg : null;
  } catch {
    return null;
  }
}

export class Authenticator {
  /**
   * Tokens verify() accepted, by their whole text. Exact: a token text that verified once
   * verifies again for as long as its `nbf`/`exp` say, which each use checks.
   */
  private readonly verified = createLRU<string, Verified>({ max: VERIFIED_TOKENS });

  constructor(
    private readonly own: OwnTokens,
    private readonly provider: ProviderTokens | null,
    private readonly states: UserStates,
  ) {}

  /**
   * The claims of a token verified before that still holds now, else undefined: then
   * authenticate() decides (and says why it fails).
   */
  known(token: string): AuthClaims | undefined {
    const verified = this.verified.get(token);
    if (verified === undefined) return undefined;
    const now = Date.now();
    if (now < verified.from || now >= verified.until) return undefined;
    const { claims } = verified;
    if (claims.passwordVersion !== null && this.states.current(claims, now) !== true) {
      return undefined;
    }
    return claims;
  }

  /** The caller a token names; throws the 401 (or the provider's 503) the guard answers with. */
  async authenticate(token: string): Promise<AuthClaims> {
    const claims = await this.verify(token);
    if (claims.passwordVersion !== null) {
      let current = this.states.current(claims, Date.now());
      if (current === undefined) {
        await this.states.load(claims.sub);
        current = this.states.current(claims, Date.now());
      }
      // Removed, given another role or a new password since the token was signed.
      if (current !== true) throw accessDenied();
    }
    return claims;
  }

  private async verify(token: string): Promise<AuthClaims> {
    const known = this.verified.get(token);
    const now = Date.now();
    if (known !== undefined && now >= known.from && now < known.until) return known.claims;
    const algorithm = algorithmOf(token);
    let claims: AuthClaims;
    let tolerance = 0;
    try {
      if (algorithm === OWN_ALGORITHM) {
        claims = await this.own.verify(token);
      } else if (
        this.provider !== null &&
        algorithm !== null &&
        PROVIDER_ALGORITHM_SET.has(algorithm)
      ) {
        claims = await this.provider.verify(token);
        tolerance = PROVIDER_CLOCK_TOLERANCE_SECONDS;
      } else {
        throw accessDenied();
      }
    } catch (error) {
      this.verified.delete(token);
      // jose says "expired" only once the signature is known good: a forged token never is.
      if (error instanceof errors.JWTExpired) throw tokenExpired();
      if (error instanceof KeysUnavailable) throw identityProviderUnavailable();
      throw accessDenied();
    }
    this.verified.set(token, {
      claims,
      from: (claims.nbf - tolerance) * 1000,
      until: (claims.exp + tolerance) * 1000,
    });
    return claims;
  }
}
