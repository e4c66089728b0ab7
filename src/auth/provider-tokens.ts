/**
 * Tokens from an identity provider (Keycloak, Auth0, Entra ID, Cognito, Google…): RS256, ES256
 * or EdDSA, verified by jose against the provider's keys (auth/provider-keys.ts), with `iss`
 * and `aud` pinned to `--jwt-issuer` and `--jwt-audience`, and mapped to the caller the policy
 * sees through `--user-id-claim`, `--email-claim` and `--role-claim` (auth/claims.ts).
 */
import { errors, type JWTPayload, type JWTVerifyOptions, jwtVerify } from 'jose';
import { PROVIDER_CLOCK_TOLERANCE_SECONDS } from '../limits.js';
import { type ClaimNames, claimAt, roleOf, userIdOf } from './claims.js';
import type { ProviderKeys } from './provider-keys.js';
import { type AuthClaims, InvalidClaims } from './tokens.js';

export interface ProviderSettings {
  readonly issuer: string;
  readonly audience: string;
  readonly claims: ClaimNames;
  /** The role of a token whose role claim names none the policy defines (`--default-role`). */
  readonly defaultRole: string;
  /** Whether the policy defines a role; null without a policy (then any role is taken). */
  readonly definesRole: ((role: string) => boolean) | null;
}

export class ProviderTokens {
  private readonly options: JWTVerifyOptions;

  constructor(
    private readonly keys: ProviderKeys,
    private readonly settings: ProviderSettings,
  ) {
    this.options = {
      algorithms: [...keys.algorithms],
      issuer: settings.issuer,
      audience: settings.audience,
      // A provider's clock is not ours: a token issued "now" there may be a second ahead here.
      clockTolerance: PROVIDER_CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ['exp'],
    };
  }

  /** The caller a valid token names; throws jose's errors, KeysUnavailable or InvalidClaims. */
  async verify(token: string): Promise<AuthClaims> {
    return this.claimsOf(await this.verifiedPayload(token));
  }

  private async verifiedPayload(token: string): Promise<JWTPayload> {
    try {
      return (await jwtVerify(token, this.keys.getKey, this.options)).payload;
    } catch (error) {
      // A token without `kid` and several keys of its type: jose hands the candidates over.
      if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
      for await (const key of error) {
        try {
          return (await jwtVerify(token, key, this.options)).payload;
        } catch (again) {
          if (!(again instanceof errors.JWSSignatureVerificationFailed)) throw again;
        }
      }
      throw new errors.JWSSignatureVerificationFailed();
    }
  }

  private claimsOf(payload: JWTPayload): AuthClaims {
    const { claims, defaultRole, definesRole } = this.settings;
    const sub = userIdOf(claimAt(payload, claims.userId));
    // Without a user id there is nobody to be: `@user.id` must never be empty.
    if (sub === null) throw new InvalidClaims();
    const email = claimAt(payload, claims.email);
    return Object.freeze({
      sub,
      email: typeof email === 'string' ? email : '',
      role: roleOf(claimAt(payload, claims.role), definesRole, defaultRole),
      exp: payload.exp as number,
      nbf: typeof payload.nbf === 'number' ? payload.nbf : 0,
      passwordVersion: null,
    });
  }
}
