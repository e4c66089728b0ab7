/**
 * Who an identity provider's token says the caller is: the claims named by `--user-id-claim`,
 * `--email-claim` and `--role-claim` read out of its payload. Pure: the payload is already
 * verified (auth/provider-tokens.ts); this only finds values and chooses the role.
 */

/** Where the user id, email and role are in a provider's token (`--*-claim`). */
export interface ClaimNames {
  readonly userId: string;
  readonly email: string;
  readonly role: string;
}

export const DEFAULT_CLAIM_NAMES: ClaimNames = { userId: 'sub', email: 'email', role: 'role' };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The value at a dotted claim path: `realm_access.roles` is `payload.realm_access.roles`. A name
 * that itself holds dots (Auth0's namespaced `https://example.com/roles`) is found too: at each
 * level the longest key the remaining path starts with wins, so the whole path as one key comes
 * first. Only own properties count (never `__proto__` or `constructor` of the prototype).
 */
export function claimAt(payload: unknown, claimPath: string): unknown {
  if (!isObject(payload)) return undefined;
  if (Object.hasOwn(payload, claimPath)) return payload[claimPath];
  for (let dot = claimPath.lastIndexOf('.'); dot > 0; dot = claimPath.lastIndexOf('.', dot - 1)) {
    const head = claimPath.slice(0, dot);
    if (Object.hasOwn(payload, head)) {
      const found = claimAt(payload[head], claimPath.slice(dot + 1));
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** A user id claim as `@user.id` takes it: a non-empty string, or a number written out. */
export function userIdOf(value: unknown): string | null {
  if (typeof value === 'string') return value === '' ? null : value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return null;
}

/**
 * The role a role claim gives: the claim is a string or a list of them (Keycloak's
 * `realm_access.roles`, a list of groups); the first that the policy defines (without a policy,
 * the first) is the role. `fallback` (`--default-role`) when the claim is missing or names no
 * role the policy defines, as for a user who registered.
 */
export function roleOf(
  value: unknown,
  defined: ((role: string) => boolean) | null,
  fallback: string,
): string {
  const candidates = Array.isArray(value) ? value : [value];
  for (const item of candidates) {
    if (typeof item === 'string' && item !== '' && (defined === null || defined(item))) {
      return item;
    }
  }
  return fallback;
}
