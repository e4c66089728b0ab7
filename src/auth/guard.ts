/**
 * The one gate of auth mode: an `onRequest` hook at the root, in front of every route — table
 * routes, uploads, files, unknown URLs and anything added later — except the few listed in
 * PUBLIC_ROUTES. A request passes with a valid `Authorization: Bearer <token>`, and its verified
 * claims are left on `request.auth`; without a token it passes only to what a policy grants
 * `anonymous`; otherwise 401 `Access Denied` with `WWW-Authenticate: Bearer` (RFC 6750's
 * `error="invalid_token"` added when the token is ours but expired).
 */
import type { FastifyInstance } from 'fastify';
import { accessDenied, tokenExpired } from '../errors.js';
import { anonymousMay } from '../http/policy-gate.js';
import type { Services } from '../services.js';
import type { AuthClaims } from './tokens.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified token's claims in auth mode; null in open mode and before the guard ran. */
    auth: AuthClaims | null;
  }
}

/**
 * The only requests that need no token: `<METHOD> <route pattern>`, matched against the route
 * Fastify selected (never the raw URL, so `/health/`, `//health` or `/health?x` cannot sneak by).
 * HEAD counts as the GET of the same route. CONTRACT §4 also exempts the Swagger UI page and its
 * assets, as @fastify/swagger-ui registers them (http/docs.ts); its /docs/json and /docs/yaml (the
 * description) are not exempt, like /openapi.json.
 */
export const PUBLIC_ROUTES: ReadonlySet<string> = new Set([
  'POST /auth/register',
  'POST /auth/login',
  'GET /health',
  // Beyond CONTRACT §4: the liveness probe (a kubelet has no token); it tells nothing but "up".
  'GET /live',
  'GET /docs',
  'GET /docs/',
  'GET /docs/static/index.html',
  'GET /docs/static/swagger-initializer.js',
  'GET /docs/static/*',
]);

export function isPublicRoute(method: string, routeUrl: string | undefined): boolean {
  if (routeUrl === undefined) return false;
  return PUBLIC_ROUTES.has(`${method === 'HEAD' ? 'GET' : method} ${routeUrl}`);
}

/**
 * The token of an `Authorization: Bearer <token>` header, or null. The scheme is matched
 * case-insensitively (RFC 7235 §2.1, RFC 6750 §2.1); the token must be a b64token.
 */
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  return BEARER.exec(header)?.[1] ?? null;
}

/**
 * Decorates every request with `auth` and, in auth mode, adds the guard. Call it before any route
 * is registered so that every route is behind it.
 */
export function registerAuthGuard(app: FastifyInstance, { config, auth, policy }: Services): void {
  app.decorateRequest('auth', null);
  if (config.mode !== 'auth') return;
  if (!auth) throw new Error('auth mode needs the auth services (users, tokens)');
  const { tokens } = auth;
  // A callback hook, not an async one: it runs on every request (issue 17).
  app.addHook('onRequest', (request, _reply, done) => {
    if (isPublicRoute(request.method, request.routeOptions.url)) return done();
    const header = request.headers.authorization;
    // No token at all: `anonymous` (CONTRACT §6). A token that is given must be valid.
    if (header === undefined && anonymousMay(policy, request)) return done();
    const token = bearerToken(header);
    const claims = token === null ? null : tokens.verify(token);
    if (claims === null) {
      return done(token !== null && tokens.expired(token) ? tokenExpired() : accessDenied());
    }
    request.auth = claims;
    done();
  });
}
