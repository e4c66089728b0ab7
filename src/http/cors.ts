/**
 * The CORS settings of every answer (@fastify/cors, docs/configuration.md `--cors-origin`), in one
 * place: src/server.ts registers them, and bench/framework-cost.mjs sets its Fastify up with the
 * same.
 */
import type { FastifyCorsOptions } from '@fastify/cors';

/** `*`, one origin, or a comma-separated list of origins. */
function corsOrigin(setting: string): string | string[] {
  const origins = setting
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  return origins.length === 1 ? (origins[0] as string) : origins;
}

export function corsOptions(origin: string): FastifyCorsOptions {
  return {
    origin: corsOrigin(origin),
    // PATCH: OData's update (/odata/, docs/odata.md), which a browser app sends cross-origin.
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    // Any OPTIONS gets the CORS answer, not a text/plain 400 when a preflight header is missing.
    strictPreflight: false,
    // Browsers hide response headers from scripts unless they are listed. One string: a list
    // is joined again for every request.
    exposedHeaders: 'X-Total-Count, Link, Retry-After, WWW-Authenticate',
    maxAge: 600,
  };
}
