/**
 * The catalogue of every error tablegate answers with: a stable `code`, an HTTP status and a
 * sentence for people. Stages throw only these; the HTTP error handler turns them into
 * `{ success: false, message, code }`. Retired codes are never reused.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra response headers (`Retry-After`, `WWW-Authenticate`, …). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

// Request shape and query language (parse and plan stages).
export const invalidQuery = (message: string) => new ApiError(400, 'INVALID_QUERY', message);
export const filterSyntax = (message: string) => new ApiError(400, 'FILTER_SYNTAX', message);
export const limitExceeded = (message: string) => new ApiError(400, 'LIMIT_EXCEEDED', message);
export const unknownColumn = (table: string, column: string) =>
  new ApiError(400, 'UNKNOWN_COLUMN', `Column '${column}' does not exist in table '${table}'`);
export const unknownTable = (table: string) =>
  new ApiError(404, 'UNKNOWN_TABLE', `Table '${table}' does not exist`);
export const invalidBody = (message: string) => new ApiError(400, 'INVALID_BODY', message);
export const unsupportedMediaType = () =>
  new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', "Content-Type must be 'application/json'");
export const bodyTooLarge = (limitBytes: number) =>
  new ApiError(413, 'BODY_TOO_LARGE', `Request body is larger than ${limitBytes} bytes`);
export const routeNotFound = (method: string, url: string) =>
  new ApiError(404, 'NOT_FOUND', `No route for ${method} ${url.split('?')[0]}`);

// Database (execute stage).
export const databaseUnavailable = () =>
  new ApiError(503, 'DATABASE_UNAVAILABLE', 'Database unavailable');
export const queryTimeout = () =>
  new ApiError(504, 'QUERY_TIMEOUT', 'The query took longer than the configured time limit');
export const internalError = () => new ApiError(500, 'INTERNAL_ERROR', 'Internal server error');
