/**
 * A request this process sends to its own routes (a `$batch`'s reads, odata/batch.ts) is the
 * outer request's, not the loopback's: it carries a seal only this process can make (its key is
 * made at start and never leaves it) with the outer request's client, as the per-client limits
 * count it, and its scheme and host. Opened, the seal makes `request.client` the outer client
 * (the fair pool shares by it, http/caller.ts), leaves the read uncounted by
 * `--max-client-requests` (its batch is counted, http/client-limits.ts), and names the outer
 * origin in OData's links (odata/route.ts).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

export const LOOPBACK_HEADER = 'x-tablegate-loopback';

/** What a sealed request stands for. */
export interface LoopbackOrigin {
  /** The outer request's `request.client`. */
  readonly client: string;
  /** The outer request's scheme and host, e.g. `https://api.example.com`. */
  readonly origin: string;
}

export class Loopback {
  private readonly key = Buffer.from(randomBytes(24).toString('base64url'));

  /** The header a loopback request of `outer` carries. */
  seal(outer: LoopbackOrigin): Record<string, string> {
    return { [LOOPBACK_HEADER]: `${this.key.toString()} ${outer.client} ${outer.origin}` };
  }

  /** The outer request a request stands for, when it carries this process's seal; else null. */
  open(request: FastifyRequest): LoopbackOrigin | null {
    const given = request.headers[LOOPBACK_HEADER];
    // Nearly every request: one property read, no seal.
    if (typeof given !== 'string') return null;
    const first = given.indexOf(' ');
    const second = first === -1 ? -1 : given.indexOf(' ', first + 1);
    if (second === -1) return null;
    const key = Buffer.from(given.slice(0, first));
    if (key.length !== this.key.length || !timingSafeEqual(key, this.key)) return null;
    return { client: given.slice(first + 1, second), origin: given.slice(second + 1) };
  }
}
