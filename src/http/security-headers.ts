/**
 * Headers every answer carries: `X-Content-Type-Options: nosniff`, so a browser never runs a
 * JSON answer (or anything else) as another type; and on the Swagger UI pages a
 * Content-Security-Policy with `frame-ancestors 'none'` (and X-Frame-Options for old browsers),
 * so no other site can frame the page whose "Authorize" box takes tokens (clickjacking).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { DOCS_PREFIX } from './docs-prefix.js';

export const DOCS_CSP = "frame-ancestors 'none'; object-src 'none'; base-uri 'self'";

function isDocsPage(url: string): boolean {
  return url === DOCS_PREFIX || url.startsWith(`${DOCS_PREFIX}/`);
}

/** Puts the headers on an answer to `url`. */
export function setSecurityHeaders(reply: FastifyReply, url: string): void {
  reply.header('X-Content-Type-Options', 'nosniff');
  if (url.startsWith(DOCS_PREFIX) && isDocsPage(url.split('?')[0] ?? '')) {
    reply.header('Content-Security-Policy', DOCS_CSP);
    reply.header('X-Frame-Options', 'DENY');
  }
}

export function registerSecurityHeaders(app: FastifyInstance): void {
  // Set as the request comes in, by the first hook, so every answer built on this reply carries
  // them (a reply's headers survive the error handler); an answer to a request refused before
  // the hooks (a malformed URL) gets them from sendError (http/errors.ts). Not an onSend hook:
  // that ran a hook runner on every answer. A callback hook, not an async one.
  app.addHook('onRequest', (request, reply, done) => {
    setSecurityHeaders(reply, request.url);
    done();
  });
}
