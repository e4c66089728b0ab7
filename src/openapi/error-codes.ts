/**
 * Error responses for the API description, read from the catalogue (src/errors.ts): an
 * operation names the stages it runs, and answers every code of those stages with the status
 * the catalogue gives it. Responses are grouped by status, each with the
 * `{ success: false, message, code }` body.
 */
import { ERRORS, type ErrorCode, type ErrorSpec, MYSQL_ERRORS, type Stage } from '../errors.js';
import type { JsonSchema } from './column-schema.js';

/** MySQL's own refusals keep MySQL's error name as their code (src/db/errors.ts). */
export const MYSQL_CODE_PATTERN = '^(ER|WARN)_[A-Z0-9_]+$';

const CATALOGUE = Object.entries(ERRORS) as [ErrorCode, ErrorSpec][];

/** The catalogue's codes raised by `stages`: stage by stage, in catalogue order within one. */
export function codesOf(stages: readonly Stage[]): ErrorCode[] {
  const codes = new Set<ErrorCode>();
  for (const stage of stages) {
    for (const [code, spec] of CATALOGUE) if (spec.stages.includes(stage)) codes.add(code);
  }
  return [...codes];
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad request',
  401: 'No valid token',
  403: "The gateway's database user may not do this",
  404: 'Not found',
  405: 'Method not allowed',
  408: 'Too slow',
  409: 'Conflict with the stored data',
  412: 'Precondition failed',
  413: 'Too large',
  415: 'Unsupported media type',
  416: 'Range not satisfiable',
  429: 'Too many requests from this client',
  431: 'Headers too large',
  500: 'A bug: the detail is logged, never sent',
  502: 'A stored routine left the database in a state the gateway had to undo',
  503: 'MySQL is unavailable or busy, or the server is busy',
  504: 'The query ran past its time limit',
};

/** A few MySQL error names per status, to show what such a code looks like. */
function mysqlExamples(status: number): string[] {
  return Object.entries(MYSQL_ERRORS)
    .filter(([, spec]) => spec.status === status)
    .slice(0, 3)
    .map(([code]) => code);
}

export interface ErrorResponseOptions {
  /** Statuses at which MySQL's error names may also be the code. */
  readonly mysql?: readonly number[];
}

/**
 * The error responses of an operation running `stages`, one per status: the error body with its
 * `code` limited to those stages' codes (and MySQL's names, where `mysql` says so).
 */
export function errorResponses(
  stages: readonly Stage[],
  options: ErrorResponseOptions = {},
): Record<string, JsonSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codesOf(stages)) {
    const { status } = ERRORS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const status of options.mysql ?? []) {
    if (!byStatus.has(status)) byStatus.set(status, []);
  }
  const responses: Record<string, JsonSchema> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const listed = byStatus.get(status) ?? [];
    const mysql = options.mysql?.includes(status) ?? false;
    const examples = mysql ? mysqlExamples(status) : [];
    const alternatives: JsonSchema[] = [
      ...(listed.length > 0 ? [{ enum: listed }] : []),
      ...(mysql ? [{ type: 'string', pattern: MYSQL_CODE_PATTERN }] : []),
    ];
    const codeSchema = alternatives.length === 1 ? alternatives[0] : { anyOf: alternatives };
    const named = [
      ...listed,
      ...(examples.length > 0 ? [`a MySQL error name (${examples.join(', ')}, …)`] : []),
    ];
    const headers: Record<string, JsonSchema> = {};
    for (const code of listed) {
      for (const [name, description] of Object.entries((ERRORS[code] as ErrorSpec).headers ?? {})) {
        headers[name] = {
          description,
          schema: { type: name === 'Retry-After' ? 'integer' : 'string' },
        };
      }
    }
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

/** The one error body (docs/errors.md). */
export const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['success', 'message', 'code'],
  properties: {
    success: { const: false },
    message: { type: 'string', description: 'A sentence for people' },
    code: { type: 'string', description: 'A stable code for programs' },
  },
};

/**
 * Errors no single operation lists: answered before a route is known (Node's HTTP parser, no
 * route), or never sent as a body (a streamed response that is cut short, then logged).
 */
export const GENERAL_ERROR_STAGES: readonly Stage[] = ['connection', 'routing', 'stream'];
