/**
 * The error codes the API description cites, with their statuses taken from the catalogue
 * itself (src/errors.ts), so the description cannot give a code a status it does not answer with.
 * Error responses are grouped by status, each with the `{ success: false, message, code }` body.
 */
import * as catalogue from '../errors.js';
import { ApiError } from '../errors.js';
import type { JsonSchema } from './column-schema.js';

/** code → status, read by calling every factory of the catalogue once. */
function readCatalogue(): Map<string, number> {
  const statuses = new Map<string, number>();
  for (const [name, value] of Object.entries(catalogue)) {
    if (typeof value !== 'function' || name === 'ApiError') continue;
    // The factories only put their arguments into the message; placeholders do.
    try {
      const error = (value as (...args: unknown[]) => unknown)('', '');
      if (error instanceof ApiError) statuses.set(error.code, error.status);
    } catch {
      // Not a factory; a code missing for this reason fails statusOf() below, loudly.
    }
  }
  // Made in src/http/errors.ts from Fastify's own errors and Node's HTTP parser errors.
  statuses.set('INVALID_JSON', 400);
  statuses.set('BAD_REQUEST', 400);
  return statuses;
}

export const ERROR_STATUS: ReadonlyMap<string, number> = readCatalogue();

/** MySQL's own refusals keep MySQL's error name as their code (src/db/errors.ts). */
export const MYSQL_CODE_PATTERN = '^(ER|WARN)_[A-Z0-9_]+$';

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad request',
  401: 'No valid token',
  403: "The gateway's database user may not do this",
  404: 'Not found',
  409: 'Conflict with the stored data',
  412: 'Precondition failed',
  413: 'Too large',
  415: 'Unsupported media type',
  416: 'Range not satisfiable',
  429: 'Too many requests from this client',
  500: 'A bug: the detail is logged, never sent',
  503: 'MySQL is unavailable, or the server is busy',
  504: 'The query ran past its time limit',
};

/** Statuses at which a MySQL error name may be the code (see CLIENT_ERRORS in db/errors.ts). */
const MYSQL_EXAMPLES: Readonly<Record<number, string[]>> = {
  400: ['ER_BAD_NULL_ERROR', 'ER_DATA_TOO_LONG', 'ER_WARN_DATA_OUT_OF_RANGE'],
  403: ['ER_TABLEACCESS_DENIED_ERROR'],
  404: ['ER_NO_SUCH_TABLE'],
  409: ['ER_DUP_ENTRY', 'ER_NO_REFERENCED_ROW_2', 'ER_ROW_IS_REFERENCED_2'],
};

export interface ErrorResponseOptions {
  /** Statuses at which MySQL's error names may also be the code. */
  readonly mysql?: readonly number[];
}

const HEADERS_BY_CODE: Readonly<Record<string, JsonSchema>> = {
  ACCESS_DENIED: {
    'WWW-Authenticate': {
      description:
        '`Bearer`; for an expired token `Bearer error="invalid_token", error_description="The access token expired"` (RFC 6750)',
      schema: { type: 'string' },
    },
  },
  TOO_MANY_ATTEMPTS: {
    'Retry-After': {
      description: 'Seconds until login is allowed again',
      schema: { type: 'integer' },
    },
  },
  TOO_MANY_REQUESTS: {
    'Retry-After': {
      description: 'Seconds until this address may register or fail a login again',
      schema: { type: 'integer' },
    },
  },
  TOO_MANY_CONCURRENT_REQUESTS: {
    'Retry-After': { description: 'Always 1 (second)', schema: { type: 'integer' } },
  },
  SERVER_BUSY: {
    'Retry-After': { description: 'Always 1 (second)', schema: { type: 'integer' } },
  },
};

function statusOf(code: string): number {
  const status = ERROR_STATUS.get(code);
  if (status === undefined) throw new Error(`error code ${code} is not in the catalogue`);
  return status;
}

/**
 * The error responses of an operation, one per status: the error body with its `code` limited to
 * the codes listed (and MySQL's names, where `mysql` says so).
 */
export function errorResponses(
  codes: readonly string[],
  options: ErrorResponseOptions = {},
): Record<string, JsonSchema> {
  const byStatus = new Map<number, string[]>();
  for (const code of codes) {
    const status = statusOf(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const status of options.mysql ?? []) {
    if (!byStatus.has(status)) byStatus.set(status, []);
  }
  const responses: Record<string, JsonSchema> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const listed = byStatus.get(status) ?? [];
    const mysql = options.mysql?.includes(status) ?? false;
    const examples = mysql ? (MYSQL_EXAMPLES[status] ?? []) : [];
    const alternatives: JsonSchema[] = [
      ...(listed.length > 0 ? [{ enum: listed }] : []),
      ...(mysql ? [{ type: 'string', pattern: MYSQL_CODE_PATTERN }] : []),
    ];
    const codeSchema = alternatives.length === 1 ? alternatives[0] : { anyOf: alternatives };
    const named = [
      ...listed,
      ...(examples.length > 0 ? [`a MySQL error name (${examples.join(', ')}, …)`] : []),
    ];
    const headers = Object.assign({}, ...listed.map((code) => HEADERS_BY_CODE[code] ?? {}));
    responses[String(status)] = {
      description: `${REASONS[status] ?? 'Error'}: ${named.join(', ')}`,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/Error' },
              { type: 'object', properties: { code: codeSchema } },
            ],
          },
        },
      },
    };
  }
  return responses;
}

/** The one error body (CONTRACT §3). */
export const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['success', 'message', 'code'],
  properties: {
    success: { const: false },
    message: { type: 'string', description: 'A sentence for people' },
    code: { type: 'string', description: 'A stable code for programs' },
  },
};
