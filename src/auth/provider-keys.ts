/**
 * The public keys an identity provider signs with: a JWKS fetched from `--jwks-url` (cached,
 * fetched again when a token names a `kid` it does not hold — key rotation — but at most once
 * per JWKS_REFETCH_COOLDOWN_MS, failed fetches included), or the key(s) of `--jwt-public-key`
 * (a PEM public key, a JWK or a JWK set). Key selection and import are jose's
 * (`createLocalJWKSet`): a key is used only for the algorithm family its type belongs to.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createLocalJWKSet, errors, type JWSHeaderParameters, type JWTVerifyGetKey } from 'jose';
import { JWKS_FETCH_TIMEOUT_MS, JWKS_MAX_AGE_MS, JWKS_REFETCH_COOLDOWN_MS } from '../limits.js';

/** The asymmetric algorithms a provider's token may use (RS256, ES256 with P-256, Ed25519). */
export const PROVIDER_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;

/** The provider's keys could not be had (its JWKS did not answer, or not with a key set). */
export class KeysUnavailable extends Error {
  override readonly name = 'KeysUnavailable';
}

type LocalSet = ReturnType<typeof createLocalJWKSet>;

/** What a key file or URL gives jose: a key lookup by the token's header. */
export interface ProviderKeys {
  readonly getKey: JWTVerifyGetKey;
  /** The algorithms the keys can verify (a PEM key: the one of its type). */
  readonly algorithms: readonly string[];
}

/** `--jwks-url`: the set as last fetched, fetched again at most once per cooldown. */
export class RemoteKeys implements ProviderKeys {
  readonly algorithms = PROVIDER_ALGORITHMS;
  private keys: LocalSet | null = null;
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private pending: Promise<void> | null = null;

  constructor(
    private readonly url: URL,
    /** Told each failed fetch (the gateway logs it). */
    private readonly failed: (reason: string) => void = () => {},
  ) {}

  readonly getKey: JWTVerifyGetKey = async (header: JWSHeaderParameters) => {
    const now = Date.now();
    if (this.keys === null || now - this.fetchedAt >= JWKS_MAX_AGE_MS) await this.refresh(now);
    const keys = this.keys;
    if (keys === null) throw new KeysUnavailable(`no keys from ${this.url.href} yet`);
    try {
      return await keys(header);
    } catch (error) {
      // A kid the set does not hold: the provider may have rotated its keys since.
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      // Fetched meanwhile, or being fetched (for another request): use those keys.
      if (this.keys !== keys) return (this.keys as LocalSet)(header);
      if (this.pending === null && !this.mayFetch(Date.now())) throw error;
      await this.refresh(Date.now());
      return (this.keys ?? keys)(header);
    }
  };

  private mayFetch(now: number): boolean {
    return now - this.attemptedAt >= JWKS_REFETCH_COOLDOWN_MS;
  }

  /**
   * Fetches the set when the cooldown allows, or waits for the fetch under way (one fetch for
   * every request waiting on it). A failure keeps the keys there were: tokens they verify keep
   * working while the provider is away.
   */
  async refresh(now = Date.now()): Promise<void> {
    if (this.pending === null && this.mayFetch(now)) {
      this.attemptedAt = now;
      this.pending = this.fetchSet()
        .then(
          (keys) => {
            this.keys = keys;
            this.fetchedAt = Date.now();
          },
          (error: unknown) => this.failed((error as Error).message),
        )
        .finally(() => {
          this.pending = null;
        });
    }
    await this.pending;
  }

  private async fetchSet(): Promise<LocalSet> {
    let response: Response;
    try {
      response = await fetch(this.url, {
        // A redirect is not followed: the keys come from the URL configured, nowhere else.
        redirect: 'manual',
        headers: { accept: 'application/json, application/jwk-set+json' },
        signal: AbortSignal.timeout(JWKS_FETCH_TIMEOUT_MS),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      throw new KeysUnavailable(`${this.url.href}: ${cause ?? (error as Error).message}`);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new KeysUnavailable(`${this.url.href} answered ${response.status}, not 200`);
    }
    try {
      return createLocalJWKSet(await response.json());
    } catch {
      throw new KeysUnavailable(`${this.url.href} did not answer with a JSON Web Key Set`);
    }
  }
}

/** The algorithm a PEM public key verifies: one per key type, as the family rule wants. */
function algorithmOfKey(key: KeyObject): string | null {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'RS256';
    case 'ec':
      return key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? 'ES256' : null;
    case 'ed25519':
      return 'EdDSA';
    default:
      return null;
  }
}

/** A problem with the key file, said in one line for the start-up error. */
export class KeyFileError extends Error {
  override readonly name = 'KeyFileError';
}

/**
 * `--jwt-public-key <file>`: a PEM public key (`-----BEGIN PUBLIC KEY-----`), or JSON: one JWK
 * or a JWK set (`{"keys": […]}`). A private key is refused: the gateway never needs one.
 */
export async function loadKeyFile(file: string): Promise<ProviderKeys> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new KeyFileError(`cannot read it: ${(error as { code?: string }).code ?? error}`);
  }
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    let json: { keys?: unknown };
    try {
      json = JSON.parse(trimmed) as { keys?: unknown };
    } catch {
      throw new KeyFileError('not valid JSON (a JWK or a JWK set)');
    }
    const set = Array.isArray(json.keys) ? json : { keys: [json] };
    for (const jwk of set.keys as Record<string, unknown>[]) {
      if (typeof jwk === 'object' && jwk !== null && ('d' in jwk || 'k' in jwk)) {
        throw new KeyFileError('holds a private or secret key; give only the public key');
      }
    }
    let keys: LocalSet;
    try {
      keys = createLocalJWKSet(set as Parameters<typeof createLocalJWKSet>[0]);
    } catch {
      throw new KeyFileError('not a JWK or a JWK set');
    }
    return { getKey: keys, algorithms: PROVIDER_ALGORITHMS };
  }
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(trimmed)) {
    throw new KeyFileError('holds a private key; give only the public key');
  }
  let key: KeyObject;
  try {
    key = createPublicKey(trimmed);
  } catch {
    throw new KeyFileError('not a PEM public key, a JWK or a JWK set');
  }
  const algorithm = algorithmOfKey(key);
  if (algorithm === null) {
    throw new KeyFileError(
      `a ${key.asymmetricKeyType} key; tokens are checked with RSA (RS256), P-256 (ES256) or Ed25519 (EdDSA) keys`,
    );
  }
  return { getKey: async () => key, algorithms: [algorithm] };
}
