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
/** `?filter=…` (or a `$filter` a shell replaced with nothing) would silently read every row. */
export const optionWithoutDollar = (key: string, meant: string) =>
  new ApiError(
    400,
    'OPTION_WITHOUT_DOLLAR',
    meant === ''
      ? "A query parameter has no name ('?=…'): did a shell replace $filter inside double quotes? Quote the URL with single quotes or write %24filter"
      : `Unknown query parameter '${key}': did you mean '${meant}'?`,
  );
export const filterSyntax = (message: string) => new ApiError(400, 'FILTER_SYNTAX', message);
/** A date/time literal or a function meets a column of the wrong type (CONTRACT §3.1a). */
export const filterType = (message: string) => new ApiError(400, 'FILTER_TYPE', message);
export const limitExceeded = (message: string) => new ApiError(400, 'LIMIT_EXCEEDED', message);
export const unknownColumn = (table: string, column: string) =>
  new ApiError(400, 'UNKNOWN_COLUMN', `Column '${column}' does not exist in table '${table}'`);
export const unknownTable = (table: string) =>
  new ApiError(404, 'UNKNOWN_TABLE', `Table '${table}' does not exist`);
export const invalidBody = (message: string) => new ApiError(400, 'INVALID_BODY', message);
export const bodyTooDeep = (limit: number) =>
  new ApiError(
    400,
    'BODY_TOO_DEEP',
    `The JSON body nests arrays and objects deeper than ${limit} levels`,
  );
export const unsupportedMediaType = () =>
  new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', "Content-Type must be 'application/json'");
export const bodyTooLarge = (limitBytes: number) =>
  new ApiError(413, 'BODY_TOO_LARGE', `Request body is larger than ${limitBytes} bytes`);
export const malformedUrl = () =>
  new ApiError(400, 'MALFORMED_URL', 'The URL is not valid: check its percent-encoding');
/**
 * Raw bytes above 0x7F in the request target (`curl '…?$filter=city eq 'Zürich''`). Node's
 * parser (llhttp) refuses them even with insecureHTTPParser, and RFC 9112 §3.2 allows only ASCII
 * there, so the request never reaches a route: http/errors.ts answers with this on the socket.
 */
export const nonAsciiUrl = () =>
  new ApiError(
    400,
    'NON_ASCII_URL',
    'The URL contains characters that are not ASCII: percent-encode them as UTF-8 (ü is %C3%BC), as browsers, encodeURIComponent and curl -G --data-urlencode do',
  );
export const routeNotFound = (method: string, url: string) =>
  new ApiError(404, 'NOT_FOUND', `No route for ${method} ${url.split('?')[0]}`);

// Database (execute stage).
export const databaseUnavailable = () =>
  new ApiError(503, 'DATABASE_UNAVAILABLE', 'Database unavailable');
export const queryTimeout = () =>
  new ApiError(504, 'QUERY_TIMEOUT', 'The query took longer than the configured time limit');
export const internalError = () => new ApiError(500, 'INTERNAL_ERROR', 'Internal server error');

// Authentication (auth mode: guard, register, login).
export const accessDenied = () =>
  new ApiError(401, 'ACCESS_DENIED', 'Access Denied', { 'WWW-Authenticate': 'Bearer' });
/** The same 401, plus RFC 6750 §3's hint that logging in again helps. */
export const tokenExpired = () =>
  new ApiError(401, 'ACCESS_DENIED', 'Access Denied', {
    'WWW-Authenticate':
      'Bearer error="invalid_token", error_description="The access token expired"',
  });
export const invalidCredentials = () =>
  new ApiError(401, 'INVALID_CREDENTIALS', 'Invalid email or password');
export const userExists = () => new ApiError(409, 'USER_EXISTS', 'User already exists');
export const tooManyAttempts = (retryAfterSeconds: number) =>
  new ApiError(
    429,
    'TOO_MANY_ATTEMPTS',
    `Too many failed login attempts; retry in ${retryAfterSeconds} seconds`,
    { 'Retry-After': String(retryAfterSeconds) },
  );

export const tooManyRequests = (retryAfterSeconds: number) =>
  new ApiError(
    429,
    'TOO_MANY_REQUESTS',
    `Too many registrations or failed logins from this address; retry in ${retryAfterSeconds} seconds`,
    { 'Retry-After': String(retryAfterSeconds) },
  );

// Load bounds (per client and for the whole server): come back in a second.
export const tooManyConcurrent = () =>
  new ApiError(
    429,
    'TOO_MANY_CONCURRENT_REQUESTS',
    'Too many requests from this address at once; retry in 1 second',
    { 'Retry-After': '1' },
  );
export const serverBusy = () =>
  new ApiError(503, 'SERVER_BUSY', 'The server is busy; retry in 1 second', {
    'Retry-After': '1',
  });

// Uploads and served files (`POST /upload`, `GET /@/<filename>`).
export const notMultipart = () =>
  new ApiError(415, 'NOT_MULTIPART', "Content-Type must be 'multipart/form-data'");
export const malformedMultipart = () =>
  new ApiError(
    400,
    'MALFORMED_MULTIPART',
    'The multipart/form-data body is malformed or incomplete',
  );
export const wrongFileField = (field: string) =>
  new ApiError(
    400,
    'WRONG_FILE_FIELD',
    `Files must be sent in form fields named 'files', not '${field}'`,
  );
export const noFiles = () =>
  new ApiError(400, 'NO_FILES', "No file was sent: add one or more parts named 'files'");
export const fileTooLarge = (limitBytes: number) =>
  new ApiError(413, 'FILE_TOO_LARGE', `A file is larger than the limit of ${limitBytes} bytes`);
export const tooManyFiles = (limit: number) =>
  new ApiError(413, 'TOO_MANY_FILES', `At most ${limit} files may be sent in one request`);
export const tooManyParts = () =>
  new ApiError(413, 'TOO_MANY_PARTS', 'The multipart body has too many parts or fields');
export const invalidHost = () =>
  new ApiError(400, 'INVALID_HOST', 'The Host header is missing or is not a plain host[:port]');
export const fileNotFound = () => new ApiError(404, 'FILE_NOT_FOUND', 'File not found');
export const rangeNotSatisfiable = (headers: Readonly<Record<string, string>>) =>
  new ApiError(416, 'RANGE_NOT_SATISFIABLE', 'The requested range is not satisfiable', headers);
export const preconditionFailed = () =>
  new ApiError(412, 'PRECONDITION_FAILED', 'A precondition of the request failed');
export const forbiddenFieldName = () =>
  new ApiError(
    400,
    'FORBIDDEN_FIELD_NAME',
    "Form field names that are Object.prototype properties ('__proto__', 'constructor', …) are not allowed",
  );

// Table writes (`create`, `update(<key>,<value>)`, `delete(<key>,<value>)`): values that cannot
// be stored as sent. MySQL's own refusals keep MySQL's error names (db/errors.ts).
export const invalidValue = (message: string) => new ApiError(400, 'INVALID_VALUE', message);
export const generatedColumn = (table: string, column: string) =>
  new ApiError(
    400,
    'GENERATED_COLUMN',
    `Column '${column}' of table '${table}' is generated by MySQL and cannot be written`,
  );
