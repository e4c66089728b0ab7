/**
 * A thrown error → the catalogue error it is answered with (docs/errors.md): an ApiError as it
 * is, Fastify's own client errors by their codes, a MySQL error by db/errors.ts. The error
 * handler (http/errors.ts) answers with it and the metrics count by it: a module of its own, so
 * that metrics/, which services.ts (and through it http/) imports, imports nothing of http/.
 */
import type { FastifyError } from 'fastify';
import { mapDbError } from './db/errors.js';
import { ApiError, apiError } from './errors.js';

/** Fastify's own client errors → catalogue errors. */
const FASTIFY_ERRORS: Readonly<Record<string, () => ApiError>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => apiError('UNSUPPORTED_MEDIA_TYPE'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    apiError('INVALID_BODY', 'Content-Length does not match the body'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => apiError('INVALID_BODY', 'Request body is empty'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => apiError('BODY_TOO_LARGE'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => apiError('INVALID_JSON'),
};

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as Partial<FastifyError>;
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const known = FASTIFY_ERRORS[fastifyError.code ?? ''];
    if (known) return known();
    // JSON.parse's SyntaxError arrives as a 400 without a code.
    if (error instanceof SyntaxError) return apiError('INVALID_JSON');
    return apiError('BAD_REQUEST');
  }
  return mapDbError(error);
}
