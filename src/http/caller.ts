/**
 * Every request is the caller of its statements as the execute stage sees one (execute/caller.ts):
 * `request.client`, its address as the per-client limits count it (request.ip, which follows
 * --trust-proxy; IPv6 by /64), by which the pool is shared fairly; and `request.anonymous`, true
 * without a token (open mode, or auth mode's `anonymous` role), whose statements run under
 * --anonymous-query-timeout. Getters on the request's prototype: nothing is made per request.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { clientAddress } from '../auth/limits.js';

declare module 'fastify' {
  interface FastifyRequest {
    readonly client: string;
    readonly anonymous: boolean;
  }
}

export function registerCaller(app: FastifyInstance): void {
  app.decorateRequest('client', {
    getter(this: FastifyRequest) {
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
