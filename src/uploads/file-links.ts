/**
 * Signed file links (auth mode): an upload's `accessURL` carries `?exp=<unix seconds>&sig=<MAC>`
 * so that `<img src>` and a plain link work without an Authorization header. The MAC is
 * HMAC-SHA256 over the stored name and `exp`, with a key derived from the JWT secret: every
 * gateway that shares the secret accepts the links of the others, and a link is good for that
 * one file until `exp` (`--file-url-ttl`). Who may make one is http/upload.ts's decision.
 */
import { createHmac, type KeyObject, timingSafeEqual } from 'node:crypto';

/** Separates the link key from every other use of the JWT secret. */
const KEY_PURPOSE = 'tablegate signed file links v1';
const EXP = /^\d{1,12}$/;
/** A SHA-256 MAC in base64url: 43 characters. */
const SIG = /^[A-Za-z0-9_-]{43}$/;

export class FileLinks {
  private readonly key: Buffer;

  constructor(
    secret: KeyObject,
    /** `--file-url-ttl` in seconds. */
    private readonly lifetimeSeconds: number,
  ) {
    this.key = createHmac('sha256', secret).update(KEY_PURPOSE).digest();
  }

  private mac(filename: string, exp: string): string {
    return createHmac('sha256', this.key).update(`${filename}\n${exp}`).digest('base64url');
  }

  /** The query string that makes `/@/<filename>` openable without a token until it expires. */
  query(filename: string, now = Date.now()): string {
    const exp = String(Math.floor(now / 1000) + this.lifetimeSeconds);
    return `?exp=${exp}&sig=${this.mac(filename, exp)}`;
  }

  /** Whether `exp` and `sig` as they came in the query are a link to this file, unexpired. */
  opens(filename: string, exp: unknown, sig: unknown, now = Date.now()): boolean {
    if (typeof exp !== 'string' || typeof sig !== 'string' || !EXP.test(exp) || !SIG.test(sig)) {
      return false;
    }
    if (Number(exp) * 1000 <= now) return false;
    return timingSafeEqual(Buffer.from(sig), Buffer.from(this.mac(filename, exp)));
  }
}

/** Whether a query asks to be let in by a link (then it must be a good one). */
export function carriesLink(query: unknown): boolean {
  if (typeof query !== 'object' || query === null) return false;
  return 'sig' in query || 'exp' in query;
}
