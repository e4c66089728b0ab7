/**
 * The one error body: `{ success: false, message, code }`. ApiErrors carry their status; Fastify's
 * own client errors (bad JSON, wrong media type, body too large) are mapped to stable codes; any
 * other error is a bug: logged with the request id, answered with a generic 500.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ApiError, ERRORS, internalError } from '../errors.js';
import { type Log, requestLog } from '../log.js';
import { toApiError } from '../to-api-error.js';
import { RouteMethods } from './allowed-methods.js';
import { checkBodyDepth } from './body-guards.js';
import { JSON_TYPE } from './json-rows.js';
import { setSecurityHeaders } from './security-headers.js';

/**
 * A JSON body that is empty or not JSON. Fastify parses a body before its 404 handler runs, so
 * without this a route that does not exist would answer 400 for it instead of its 404 (or 405):
 * what the body holds means nothing where no route takes it (docs/errors.md).
 */
function isUnreadableBody(error: unknown): boolean {
  const { code } = error as Partial<FastifyError>;
  return (
    code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
    code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    error instanceof SyntaxError
  );
}

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  // Also for answers to requests refused before any hook ran (frameworkErrors).
  setSecurityHeaders(reply, reply.request.url);
  return reply
    .code(error.status)
    .headers(error.headers)
    .type(JSON_TYPE)
    .send({ success: false, message: error.message, code: error.code });
}

/** `onSchemaChanged` is told when MySQL says the cached schema is out of date (it re-reads it). */
export function registerErrorHandling(
  app: FastifyInstance,
  log: Log,
  onSchemaChanged: () => Promise<void>,
  routes: RouteMethods = new RouteMethods(),
  /** How a route-less refusal (404, 405) is sent: a front door may frame its own URLs' (OData). */
  send: (reply: FastifyReply, error: ApiError) => FastifyReply = sendError,
): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const answer =
      request.is404 && isUnreadableBody(error)
        ? routes.refusal(request.method, request.url)
        : toApiError(error);
    // MySQL no longer knows a table or column the schema cache had: it changed under us.
    if (answer.schemaMiss) {
      onSchemaChanged().catch((cause: unknown) =>
        requestLog(log, request).warn({ err: cause }, 'schema re-read failed'),
      );
    }
    if (answer.status === 500) requestLog(log, request).error({ err: error }, 'request failed');
    // MySQL down or slow is the operator's concern, not a bug: one short line, no stack.
    else if (answer.status > 500)
      requestLog(log, request).warn({ code: answer.code }, answer.message);
    return sendError(reply, answer.status === 500 ? internalError() : answer);
  });
  // A body sent to no route is still parsed, and still bounded in depth (body-guards.ts).
  app.setNotFoundHandler({ preValidation: checkBodyDepth }, (request, reply) =>
    send(reply, routes.refusal(request.method, request.url)),
  );
}

type ParserErrorCode =
  | 'HEADERS_TOO_LARGE'
  | 'REQUEST_TIMEOUT'
  | 'MALFORMED_REQUEST'
  | 'NON_ASCII_URL';

/** Errors Node's HTTP parser finds before Fastify sees a request: oversized headers, timeouts, garbage. */
const PARSER_ERRORS: Readonly<Record<string, { reason: string; code: ParserErrorCode }>> = {
  HPE_HEADER_OVERFLOW: { reason: 'Request Header Fields Too Large', code: 'HEADERS_TOO_LARGE' },
  ERR_HTTP_REQUEST_TIMEOUT: { reason: 'Request Timeout', code: 'REQUEST_TIMEOUT' },
};
const MALFORMED = { reason: 'Bad Request', code: 'MALFORMED_REQUEST' } as const;
const NON_ASCII = { reason: 'Bad Request', code: 'NON_ASCII_URL' } as const;

/** The parser's error for an HTTP client error; Node puts the offending byte at `bytesParsed`. */
function clientErrorOf(
  error: NodeJS.ErrnoException & { rawPacket?: Buffer; bytesParsed?: number },
): { reason: string; code: ParserErrorCode } {
  if (error.code === 'HPE_INVALID_URL' && error.rawPacket && error.bytesParsed !== undefined) {
    if ((error.rawPacket[error.bytesParsed] ?? 0) >= 0x80) return NON_ASCII;
  }
  return PARSER_ERRORS[error.code ?? ''] ?? MALFORMED;
}

/** Fastify's clientErrorHandler: the same JSON error body, written on the raw socket. */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) return;
  // Garbage after a request whose answer is still being prepared (a body sent without a length,
  // pipelined junk): a 400 written now would reach the client as the answer to that request,
  // which may well succeed. Let that answer go out, then close the connection.
  // (A request whose body was cut off is not complete: that connection is closed as before.)
  const pending = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (pending && !pending.writableEnded && pending.req.complete) {
    pending.shouldKeepAlive = false;
    return;
  }
  const { reason, code } = clientErrorOf(error);
  const { status, message } = ERRORS[code];
  const body = JSON.stringify({ success: false, message, code });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: ${JSON_TYPE}\r\n` +
      'X-Content-Type-Options: nosniff\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
