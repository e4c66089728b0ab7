/**
 * Whom a statement runs for, as the execute stage needs to know it: the client address the pool
 * is shared fairly by (acquire.ts), and whether the request has no token (its statements then
 * run under `--anonymous-query-timeout`). An HTTP request is one as it is (http/caller.ts), so no
 * object is made per request.
 */
export interface Caller {
  /** The client's address as every per-client limit counts it (IPv6 by /64). */
  readonly client: string;
  /** No token: open mode, or auth mode's `anonymous` role. */
  readonly anonymous: boolean;
}

/**
 * The gateway's own statements (schema reads, users): one client of their own (a name no address
 * has), under the query timeout.
 */
export const GATEWAY: Caller = { client: '(gateway)', anonymous: false };
