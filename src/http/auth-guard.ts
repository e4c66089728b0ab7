/**
 * The one gate of auth mode: an `onRequest` hook at the root, in front of every route — table
 * routes, uploads, files, unknown URLs and anything added later — except those that declare
 * themselves public (http/route-gate.ts). A request passes with a valid `Authorization: Bearer <token>`
 * (auth/authenticator.ts), and its verified claims are left on `request.auth`; a file download also
 * with a good signed link (`?exp=…&sig=…`, uploads/file-links.ts); without either it passes only
 * to what a policy grants `anonymous`; otherwise 401 `Access Denied` with
 * `WWW-Authenticate: Bearer` (RFC 6750's `error="invalid_token"` added when the token is genuine
 * but expired).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BasicCredentials, isBasic } from '../auth/basic.js';
import { authLimitsOf } from '../auth/limits.js';
import type { AuthClaims } from '../auth/tokens.js';
import { ApiError, accessDenied } from '../errors.js';
import type { Services } from '../services.js';
import { carriesLink, type FileLinks } from '../uploads/file-links.js';
import { anonymousMay } from './policy-gate.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified token's claims in auth mode; null in open mode and before the guard ran. */
    auth: AuthClaims | null;
    /** A file download let in by a good signed link instead of a token. */
    fileLink: boolean;
  }
}

/** The file route as Fastify names it (http/files.ts). */
const FILE_ROUTE = '/@/*';
/** The change feed as Fastify names it (http/changes.ts). */
const FEED_ROUTE = '/table/:table/changes';

/**
 * Whether the route needs no token: it declares itself `public` (http/route-gate.ts), matched on
 * the route Fastify selected (never the raw URL, so `/health/`, `//health` or `/health?x` cannot
 * sneak by); a HEAD is the GET of its route. No route matched (the 404): guarded too.
 */
export function isPublic(request: FastifyRequest): boolean {
  return request.routeOptions.config.gate?.kind === 'public';
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
 * The change feed's `?access_token=<jwt>`, as a Bearer header: a browser's EventSource cannot
 * send headers (docs/changes.md). Only that route takes it; the access log never shows it
 * (http/log-redaction.ts).
 */
function feedToken(request: FastifyRequest): string | undefined {
  if (request.routeOptions.url !== FEED_ROUTE) return undefined;
  const token = (request.query as { access_token?: unknown }).access_token;
  return typeof token === 'string' ? `Bearer ${token}` : undefined;
}

/** Whether a download without a token carries a good signed link; null when it carries none. */
function linkOpens(links: FileLinks, request: FastifyRequest): boolean | null {
  if (request.routeOptions.url !== FILE_ROUTE || !carriesLink(request.query)) return null;
  const { exp, sig } = request.query as { exp?: unknown; sig?: unknown };
  return links.opens((request.params as { '*': string })['*'], exp, sig);
}

/** The OData service's routes, where Basic credentials are accepted (docs/odata-batch.md). */
const ODATA_PREFIX = '/odata/';

/** Whether the route Fastify selected is one of the OData service's. */
const isOData = (request: FastifyRequest): boolean =>
  request.routeOptions.url?.startsWith(ODATA_PREFIX) === true;

/**
 * A 401 on `/odata/` also offers Basic, first, so that Excel and Power BI ask for an email and
 * password (RFC 7235 §4.1: several challenges in one header, comma-separated).
 */
const BASIC_CHALLENGE = 'Basic realm="tablegate", Bearer';

function withBasicChallenge(error: unknown): unknown {
  if (!(error instanceof ApiError) || error.status !== 401) return error;
  return new ApiError(error.status, error.code, error.message, {
    ...error.headers,
    'WWW-Authenticate': BASIC_CHALLENGE,
  });
}

/**
 * Decorates every request with `auth` and, in auth mode, adds the guard. Call it before any route
 * is registered so that every route is behind it.
 */
export function registerAuthGuard(app: FastifyInstance, { config, auth, policy }: Services): void {
  app.decorateRequest('auth', null);
  app.decorateRequest('fileLink', false);
  if (config.mode !== 'auth') return;
  if (!auth) throw new Error('auth mode needs the auth services (users, tokens)');
  const { authenticator, fileLinks } = auth;
  // --odata-basic off: a Basic header is no credential anywhere (401 as a malformed token).
  const basic =
    config.odataBasic === 'off'
      ? null
      : new BasicCredentials(
          auth.users,
          auth.tokens,
          auth.states,
          authenticator,
          authLimitsOf(auth),
        );
  // A callback hook, not an async one: it runs on every request, and a token seen before is
  // decided without an await; only a token's first use waits for its verification.
  app.addHook('onRequest', (request, _reply, done) => {
    if (isPublic(request)) return done();
    const header = request.headers.authorization ?? feedToken(request);
    const odata = basic !== null && isOData(request);
    const refuse = (error: unknown) => done((odata ? withBasicChallenge(error) : error) as Error);
    if (odata && isBasic(header)) {
      const known = basic.known(header);
      if (known !== undefined) {
        request.auth = known;
        return done();
      }
      basic.authenticate(header, request.ip).then((claims) => {
        request.auth = claims;
        done();
      }, refuse);
      return;
    }
    if (header === undefined) {
      // A signed link that was edited or has expired is refused like a missing token.
      const opens = linkOpens(fileLinks, request);
      if (opens !== null) {
        request.fileLink = opens;
        return done(opens ? undefined : accessDenied());
      }
      // No token at all: `anonymous` (docs/policies.md). A token that is given must be valid.
      if (anonymousMay(policy, request)) return done();
    }
    const token = bearerToken(header);
    if (token === null) return refuse(accessDenied());
    const known = authenticator.known(token);
    if (known !== undefined) {
      request.auth = known;
      return done();
    }
    authenticator.authenticate(token).then((claims) => {
      request.auth = claims;
      done();
    }, refuse);
  });
}
