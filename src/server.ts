/**
 * buildServer(services) → a Fastify instance with every route registered. It never listens by
 * itself (main.ts does), so tests can start it on a free port.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { registerErrorHandling } from './http/errors.js';
import { healthRoutes } from './http/health.js';
import { readRoutes } from './http/read.js';
import type { Services } from './services.js';

/** Never logged: credentials in headers and bodies. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'body.password',
  'password',
  'token',
];

export function buildServer(services: Services): FastifyInstance {
  const { config } = services;
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    // One line per request is written by the onResponse hook below, not Fastify's two.
    disableRequestLogging: true,
    bodyLimit: config.bodyLimit,
    // update(<key>,<value>) carries a value in the path; the default 100 characters is too few.
    routerOptions: { maxParamLength: 8192, ignoreDuplicateSlashes: false },
    requestTimeout: 120_000,
    keepAliveTimeout: 72_000,
    connectionTimeout: 0,
    return503OnClosing: true,
  });

  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        ip: request.ip,
      },
      'request',
    );
    done();
  });

  registerErrorHandling(app);
  healthRoutes(app, services);
  readRoutes(app, services);
  return app;
}
