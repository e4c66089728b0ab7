/**
 * The gateway's log: pino, one JSON line per entry on stdout. Fastify is given no logger (issue
 * 17): with one it makes a child logger and two response listeners for every request, although
 * at our settings it writes nothing with them. A line about a request names it by
 * `reqId` itself, where Fastify's child put it.
 */
import type { FastifyRequest } from 'fastify';
import { type Logger, pino } from 'pino';

export type Log = Logger;

/** Never logged: credentials in headers and bodies. */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'body.password',
  'password',
  'token',
];

export function createLog(level: string): Log {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } });
}

/** For the lines about one request (errors, the access line): each carries its `reqId`. */
export function requestLog(log: Log, request: FastifyRequest): Log {
  return log.child({ reqId: request.id });
}
