/**
 * The one error body: `{ success: false, message, code }`. ApiErrors carry their status; Fastify's
 * own client errors (bad JSON, wrong media type, body too large) are mapped to stable codes; any
 * other error is a bug: logged with the request id, answered with a generic 500.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mapDbError } from '../db/errors.js';
import { ApiError, internalError, nonAsciiUrl, routeNotFound } from '../errors.js';

const FASTIFY_CODES: Readonly<Record<string, { code: string; message: string }>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: "Content-Type must be 'application/json'",
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'INVALID_BODY',
    message: 'Content-Length does not match the body',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'INVALID_BODY', message: 'Request body is empty' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'BODY_TOO_LARGE', message: 'Request body is too large' },
  FST_ERR_CTP_INVALID_JSON_BODY: {
    code: 'INVALID_JSON',
    message: 'Request body is not valid JSON',
  },
};

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as Partial<FastifyError>;
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const known = fastifyError.code ? FASTIFY_CODES[fastifyError.code] : undefined;
    if (known) return new ApiError(status, known.code, known.message);
    // JSON.parse's SyntaxError arrives as a 400 without a code.
    if (error instanceof SyntaxError) {
      return new ApiError(400, 'INVALID_JSON', 'Request body is not valid JSON');
    }
    return new ApiError(status, 'BAD_REQUEST', 'The request is not valid');
  }
  return mapDbError(error);
}

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply
    .code(error.status)
    .headers(error.headers)
    .type('application/json; charset=utf-8')
    .send({ success: false, message: error.message, code: error.code });
}

/** MySQL no longer knows a table or column the schema cache had: it changed under us. */
const SCHEMA_CHANGED = new Set(['ER_BAD_FIELD_ERROR', 'ER_NO_SUCH_TABLE']);

/** `onSchemaChanged` is told when MySQL says the cached schema is out of date (it re-reads it). */
export function registerErrorHandling(
  app: FastifyInstance,
  onSchemaChanged: () => Promise<void>,
): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error);
    if (SCHEMA_CHANGED.has(apiError.code)) {
      onSchemaChanged().catch((cause: unknown) =>
        request.log.warn({ err: cause }, 'schema re-read failed'),
      );
    }
    if (apiError.status === 500) request.log.error({ err: error }, 'request failed');
    // MySQL down or slow is the operator's concern, not a bug: one short line, no stack.
    else if (apiError.status > 500) request.log.warn({ code: apiError.code }, apiError.message);
    return sendError(reply, apiError.status === 500 ? internalError() : apiError);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, routeNotFound(request.method, request.url)),
  );
}

/** Errors Node's HTTP parser finds before Fastify sees a request: oversized headers, timeouts, garbage. */
const CLIENT_ERRORS: Readonly<Record<string, { status: number; reason: string; error: ApiError }>> =
  {
    HPE_HEADER_OVERFLOW: {
      status: 431,
      reason: 'Request Header Fields Too Large',
      error: new ApiError(431, 'HEADERS_TOO_LARGE', 'The request line or headers are too large'),
    },
    ERR_HTTP_REQUEST_TIMEOUT: {
      status: 408,
      reason: 'Request Timeout',
      error: new ApiError(408, 'REQUEST_TIMEOUT', 'The request took too long to arrive'),
    },
  };
const MALFORMED = {
  status: 400,
  reason: 'Bad Request',
  error: new ApiError(400, 'MALFORMED_REQUEST', 'The request is not valid HTTP'),
};
const NON_ASCII = { status: 400, reason: 'Bad Request', error: nonAsciiUrl() };

/** The parser's error for an HTTP client error; Node puts the offending byte at `bytesParsed`. */
function clientErrorOf(
  error: NodeJS.ErrnoException & { rawPacket?: Buffer; bytesParsed?: number },
) {
  if (error.code === 'HPE_INVALID_URL' && error.rawPacket && error.bytesParsed !== undefined) {
    if ((error.rawPacket[error.bytesParsed] ?? 0) >= 0x80) return NON_ASCII;
  }
  return CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED;
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
  const { status, reason, error: apiError } = clientErrorOf(error);
  const body = JSON.stringify({ success: false, message: apiError.message, code: apiError.code });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
