/**
 * buildServer(services) → a Fastify instance with every route registered. It never listens by
 * itself (main.ts does), so tests can start it on a free port.
 */

import type { Socket } from 'node:net';
import cors from '@fastify/cors';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { answerCacheOf } from './cache/feed-drops.js';
import { type Config, DEFAULTS, type TrustProxy } from './config.js';
import { malformedUrl } from './errors.js';
import { RouteMethods } from './http/allowed-methods.js';
import { authRoutes } from './http/auth.js';
import { registerAuthGuard } from './http/auth-guard.js';
import { registerBodyGuards } from './http/body-guards.js';
import { registerCaller } from './http/caller.js';
import { changesRoutes } from './http/changes.js';
import { registerClientLimits } from './http/client-limits.js';
import { corsOptions } from './http/cors.js';
import { docsRoutes } from './http/docs.js';
import { clientErrorHandler, registerErrorHandling } from './http/errors.js';
import { fileRoutes } from './http/files.js';
import { healthRoutes } from './http/health.js';
import { redactUrl } from './http/log-redaction.js';
import { Loopback } from './http/loopback.js';
import { mcpRoutes } from './http/mcp.js';
import { registerPolicyGate } from './http/policy-gate.js';
import { readRoutes } from './http/read.js';
import { rootRoutes } from './http/root.js';
import { RouteGates } from './http/route-gate.js';
import { rpcRoutes } from './http/rpc.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import { uploadRoutes } from './http/upload.js';
import { writeRoutes } from './http/write.js';
import {
  HEADERS_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  MAX_HEADER_BYTES,
  SOCKET_IDLE_TIMEOUT_MS,
} from './limits.js';
import { registerCacheMetrics } from './metrics/cache.js';
import { registerFeedMetrics } from './metrics/feed.js';
import { batchRoutes } from './odata/batch.js';
import { odataRoutes, sendErrorInItsForm } from './odata/routes.js';
import { Handler } from './pipeline/handle.js';
import { type ReadBudget, ReadPipeline } from './pipeline/read.js';
import type { Services } from './services.js';

/** The levels at which each request gets an access line. */
const ACCESS_LOG_LEVELS: ReadonlySet<string> = new Set(['info', 'debug', 'trace']);

function trustProxyOption(setting: TrustProxy): FastifyServerOptions['trustProxy'] {
  if (typeof setting === 'number') {
    // What Fastify (proxy-addr) does with a hop count: the `setting` nearest hops are proxies.
    return (_address: string, hop: number) => hop < setting;
  }
  return typeof setting === 'boolean' ? setting : [...setting];
}

/** The read cost limits of the configuration, the defaults for those it leaves out (config.ts). */
function readBudgetOf(config: Config): ReadBudget {
  const limit = config.maxReadCost ?? DEFAULTS.maxReadCost;
  const fallback =
    limit === 0 ? DEFAULTS.maxReadCostAnonymous : Math.min(limit, DEFAULTS.maxReadCostAnonymous);
  return { limit, anonymous: config.maxReadCostAnonymous ?? fallback };
}

export async function buildServer(services: Services): Promise<FastifyInstance> {
  const { config, log } = services;
  const app = Fastify({
    // No logger: the gateway logs through services.log (log.ts says why).
    logger: false,
    bodyLimit: config.bodyLimit,
    // request.ip (which every limit keys on) is the X-Forwarded-For client only from trusted proxies.
    trustProxy: trustProxyOption(config.trustProxy),
    // update(<key>,<value>) carries a value in the path; the default 100 characters is too few.
    routerOptions: { maxParamLength: 8192, ignoreDuplicateSlashes: false },
    // No cap on a whole request (a 1 GiB upload may take minutes); instead a connection that
    // sends or reads nothing for 60 s is closed, and headers must arrive within 30 s (below).
    requestTimeout: 0,
    connectionTimeout: SOCKET_IDLE_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    return503OnClosing: true,
    clientErrorHandler,
    // A malformed percent-encoding in the path: the same JSON 400 as every other error.
    frameworkErrors: (_error, _request, reply) => sendErrorInItsForm(reply, malformedUrl()),
    // Node checks the headers timeout on this interval (default 30 s, so a 30 s bound became 60).
    http: { maxHeaderSize: MAX_HEADER_BYTES, connectionsCheckingInterval: 1000 },
  });
  // Slowloris: a client trickling its headers is cut off (408) and holds no other request up.
  app.server.headersTimeout = HEADERS_TIMEOUT_MS;
  // Past it Node closes new connections at once: a flood of idle or trickling sockets cannot
  // exhaust the process's file descriptors and make the gateway unreachable.
  app.server.maxConnections = config.maxConnections;
  // Node drops a CONNECT request without a word when nothing listens for it: answer it like any
  // other malformed request (found by the HTTP fuzz drill).
  app.server.on('connect', (_request, socket: Socket) => {
    socket.on('error', () => {}); // Node took its own listener off this socket
    clientErrorHandler(Object.assign(new Error('CONNECT'), { code: 'HPE_INVALID_METHOD' }), socket);
  });

  // The access log is info: at warn and above the hook is not even registered (hot path).
  if (ACCESS_LOG_LEVELS.has(config.logLevel))
    app.addHook('onResponse', (request, reply, done) => {
      log.info(
        {
          reqId: request.id,
          method: request.method,
          url: redactUrl(request.url),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
          ip: request.ip,
        },
        'request',
      );
      done();
    });

  // request.client and request.anonymous: who runs each statement (the fair pool, time limits).
  // A $batch's reads over the loopback are its caller's (http/loopback.ts).
  const loopback = new Loopback();
  registerCaller(app, loopback);
  // First: every answer, whatever a later hook decides, carries these headers.
  registerSecurityHeaders(app);
  // Every route declares what it is (http/route-gate.ts); one that does not stops the start.
  new RouteGates().watch(app);
  // The CORS plugin's catch-all OPTIONS route takes no route options of ours: a non-preflight
  // OPTIONS needs a token like any request, and no grant (a preflight is answered before).
  app.addHook('onRoute', (route) => {
    if (route.method === 'OPTIONS' && route.url === '*' && route.config?.gate === undefined)
      route.config = { ...route.config, gate: { kind: 'signed-in' } };
  });
  // Every route's methods, for the 405 of a known path asked with another method.
  const routes = new RouteMethods();
  routes.watch(app);
  registerErrorHandling(
    app,
    log,
    () => services.schema.refreshIfStale(),
    routes,
    sendErrorInItsForm,
  );
  // --metrics-port: its hooks exist only then (hot path).
  services.metrics?.register(app, services.policy);
  registerBodyGuards(app, config.bodyTimeoutMs);
  // Awaited so its hooks run before the auth guard's: a 401 carries CORS headers too.
  await app.register(cors, corsOptions(config.corsOrigin));
  // After CORS (a 429 carries its headers too), before the guard (a flood of bad tokens counts).
  registerClientLimits(app, config.maxClientRequests, loopback);
  // Auth mode: the guard before any route, so every route is behind it unless it declares itself
  // public (http/route-gate.ts).
  registerAuthGuard(app, services);
  // --policy: after the guard (it needs the caller), before any route.
  registerPolicyGate(app, services);
  authRoutes(app, services);
  healthRoutes(app, services);
  // One read pipeline (and its caches) behind every front door.
  const reads = new ReadPipeline(
    services.schema,
    services.db.flavour,
    services.skiptokens,
    readBudgetOf(config),
  );
  // The application behind every front door: REST's routes and MCP's tools (pipeline/handle.ts).
  // --cache: whole answers, dropped by the change feed (docs/caching.md); null without it.
  const cache = answerCacheOf(config, services.feed, services.schema);
  if (cache !== null && services.metrics !== undefined) {
    registerCacheMetrics(services.metrics.registry, cache);
  }
  const handler = new Handler(services.db, services.schema, config.db.database, reads, cache);
  readRoutes(app, services, handler, cache);
  mcpRoutes(app, services, handler);
  if (services.feed !== undefined) {
    // The feed's gauges are registered here, beside its route, so http/ never imports metrics/.
    if (services.metrics !== undefined) {
      registerFeedMetrics(services.metrics.registry, services.feed);
    }
    changesRoutes(app, services, services.feed);
  }
  writeRoutes(app, handler);
  rpcRoutes(app, handler);
  // OData v4 under /odata/, on the same Handler (docs/odata.md), and its $batch.
  batchRoutes(app, handler, odataRoutes(app, services, handler, loopback));
  uploadRoutes(app, services);
  fileRoutes(app, services);
  docsRoutes(app, services);
  rootRoutes(app);
  return app;
}
