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

/**
 * The count and next page of a read, when to retry, how to sign in, a read's ETag (for
 * If-None-Match and If-Match), where OData put a created entity, the OData version,
 * and which `Prefer` was applied.
 */
const EXPOSED_HEADERS = [
  'X-Total-Count',
  'Link',
  'Retry-After',
  'WWW-Authenticate',
  'ETag',
  'Location',
  'OData-EntityId',
  'OData-Version',
  'Preference-Applied',
].join(', ');

export function corsOptions(origin: string): FastifyCorsOptions {
  return {
    origin: corsOrigin(origin),
    // PATCH: OData's update (/odata/, docs/odata.md), which a browser app sends cross-origin.
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    // Any OPTIONS gets the CORS answer, not a text/plain 400 when a preflight header is missing.
    strictPreflight: false,
    // Browsers hide response headers from scripts unless they are listed: every one the
    // gateway sends that a client reads (docs/configuration.md, "CORS"). One string: a list is
    // joined again for every request.
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  };
}
