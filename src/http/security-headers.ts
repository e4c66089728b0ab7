/**
 * Headers every answer carries: `X-Content-Type-Options: nosniff`, so a browser never runs a
 * JSON answer (or anything else) as another type; and on the Swagger UI pages a
 * Content-Security-Policy with `frame-ancestors 'none'` (and X-Frame-Options for old browsers),
 * so no other site can frame the page whose "Authorize" box takes tokens (clickjacking).
 */
import type { FastifyInstance } from 'fastify';
import { DOCS_PREFIX } from './docs.js';

export const DOCS_CSP = "frame-ancestors 'none'; object-src 'none'; base-uri 'self'";

function isDocsPage(url: string): boolean {
  return url === DOCS_PREFIX || url.startsWith(`${DOCS_PREFIX}/`);
}

export function registerSecurityHeaders(app: FastifyInstance): void {
  // A callback hook, not an async one: it runs on every answer (issue 17), and the URL is only
  // split when it can be a docs page at all.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    if (request.url.startsWith(DOCS_PREFIX) && isDocsPage(request.url.split('?')[0] ?? '')) {
      reply.header('Content-Security-Policy', DOCS_CSP);
      reply.header('X-Frame-Options', 'DENY');
    }
    done(null, payload);
  });
}
