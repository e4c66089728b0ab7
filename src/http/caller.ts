/**
 * Every request is the caller of its statements as the execute stage sees one (execute/caller.ts):
 * `request.client`, its address as the per-client limits count it (request.ip, which follows
 * --trust-proxy; IPv6 by /64; a $batch's read, its batch's), by which the pool is shared fairly; and `request.anonymous`, true
 * without a token (open mode, or auth mode's `anonymous` role), whose statements run under
 * --anonymous-query-timeout. Getters on the request's prototype: nothing is made per request.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { clientAddress } from '../auth/limits.js';
import type { Loopback } from './loopback.js';

declare module 'fastify' {
  interface FastifyRequest {
    readonly client: string;
    readonly anonymous: boolean;
  }
}

export function registerCaller(app: FastifyInstance, loopback: Loopback): void {
  app.decorateRequest('client', {
    getter(this: FastifyRequest) {
      // A $batch's read over the loopback is its batch's caller's (http/loopback.ts).
      const outer = loopback.open(this);
      if (outer !== null) return outer.client;
      // Node forgets the address of a socket closed before it was first asked for.
      return clientAddress(this.ip ?? 'unknown');
    },
  });
  app.decorateRequest('anonymous', {
    getter(this: FastifyRequest) {
      // The auth guard leaves the verified claims; null without a token, and in open mode.
      return this.auth === null;
    },
  });
}
