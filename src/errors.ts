/**
 * The catalogue of every error tablegate answers with: one table of `code → {status, stages,
 * message}`, grouped by the stage that raises it (as PostgREST groups its errors). Stages throw
 * only these; the HTTP error handler turns them into `{ success: false, message, code }`; the
 * API description reads this table directly. MySQL's own refusals keep MySQL's error names
 * (the `mysql` group, mapped in db/errors.ts). Retired codes are never reused.
 */
import { didYouMean } from './did-you-mean.js';
import { WRITE_ATTEMPTS } from './limits.js';

/**
 * Where an error comes from. An operation of the API description is a list of stages, and
 * answers the codes of those stages (openapi/error-codes.ts).
 */
export type Stage =
  | 'connection' // Node's HTTP parser, before any route: answered on the raw socket
  | 'routing' // no route (or no action) for the method and path
  | 'request' // any routed request
  | 'guard' // auth mode: the token check in front of every protected route
  | 'json-body' // a JSON request body (Fastify's parser and our shape checks)
  | 'register'
  | 'login'
  | 'password' // POST /auth/password: an own user changes their password
  | 'table' // the table named in the path
  | 'read-options' // $select, $filter, $orderby, $top, $skip, $count
  | 'read-cost' // a read's cost estimate against the caller's budget (docs/reading.md)
  | 'key' // update(<key>,<value>) / delete(<key>,<value>)
  | 'values' // the columns and values of a create or update body
  | 'rows' // the rows of a create body
  | 'execute' // running the statements
  | 'write' // a statement that writes: create, update, delete, register (execute/retry.ts)
  | 'stream' // a streamed response
  | 'upload'
  | 'files'
  | 'policy-action' // --policy: an action the caller's role may not do (docs/policies.md)
  | 'policy-rows' // --policy: a created or updated row outside the role's where
  | 'routine' // the stored procedure or function named in `/rpc/<name>`
  | 'arguments' // the parameters of a routine call (a JSON body, or a function's query string)
  | 'routine-call' // the routine's own refusal (SIGNAL), and what it leaves behind
  | 'prefer' // the Prefer header of an update or delete (max-affected)
  | 'row' // read(<key>,<value>): the one row
  | 'precondition' // If-Match on update(<key>,<value>) / delete(<key>,<value>) (docs/caching.md)
  | 'feed' // GET /table/<t>/changes: the change feed (docs/changes.md)
  | 'deep-insert' // a create body holding related rows (docs/writes.md, "Deep insert")
  | 'batch' // POST /odata/$batch: the batch envelope (docs/odata-batch.md)
  | 'odata' // the OData service under /odata/ (docs/odata.md)
  | 'mysql'; // MySQL's refusals, under MySQL's error name

export interface ErrorSpec {
  readonly status: number;
  readonly stages: readonly Stage[];
  /** The sentence, or how to make it from the details a stage knows. */
  readonly message: string | ((...details: never[]) => string);
  /** Response headers the error carries, with what they say (for the API description). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The request named something the schema cache does not know: re-read it (db/schema.ts). */
  readonly schemaMiss?: true;
}

const detail = (message: string) => message;

/** The columns of a create or update body that the role's grant does not let it write. */
interface ColumnWrite {
  readonly table: string;
  readonly action: 'create' | 'update';
  readonly columns: readonly string[];
}

export const ERRORS = {
  // connection: Node's parser refuses the bytes before a route is known.
  MALFORMED_REQUEST: {
    status: 400,
    stages: ['connection'],
    message: 'The request is not valid HTTP',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    stages: ['connection'],
    message: 'The request line or headers are too large',
  },
  // Also a JSON body that has not arrived within --body-timeout (http/body-guards.ts).
  REQUEST_TIMEOUT: {
    status: 408,
    stages: ['connection', 'json-body'],
    message: 'The request took too long to arrive',
  },

  // request: any routed request.
  MALFORMED_URL: {
    status: 400,
    stages: ['request'],
    message: 'The URL is not valid: check its percent-encoding',
  },
  /**
   * Raw bytes above 0x7F in the request target (`curl '…?$filter=city eq 'Zürich''`). Node's
   * parser (llhttp) refuses them even with insecureHTTPParser, and RFC 9112 §3.2 allows only
   * ASCII there, so the request never reaches a route: http/errors.ts answers on the socket.
   */
  NON_ASCII_URL: {
    status: 400,
    stages: ['request'],
    message:
      'The URL contains characters that are not ASCII: percent-encode them as UTF-8 (ü is %C3%BC), as browsers, encodeURIComponent and curl -G --data-urlencode do',
  },
  NOT_FOUND: {
    status: 404,
    stages: ['routing'],
    message: (method: string, url: string) => `No route for ${method} ${url.split('?')[0]}`,
  },
  /** The path exists, for other methods: `Allow` lists them (RFC 9110 §15.5.6). */
  METHOD_NOT_ALLOWED: {
    status: 405,
    stages: ['routing'],
    message: (method: string, allowed: string) =>
      `${method} is not allowed here; this path answers ${allowed}`,
    headers: { Allow: 'The methods the path answers' },
  },
  /**
   * A write to a view MySQL cannot write (GROUP BY, aggregates, DISTINCT, UNION, subqueries in
   * the select list: information_schema.VIEWS.IS_UPDATABLE = 'NO'). The write paths of such a
   * view allow no method at all: an empty `Allow`, as RFC 9110 §10.2.1 foresees for a resource
   * that is disabled. Its operations are not in the API description.
   */
  VIEW_NOT_WRITABLE: {
    status: 405,
    stages: ['routing'],
    message: (view: string) =>
      `View '${view}' cannot be written: MySQL writes only through simple views (no GROUP BY, DISTINCT, aggregate functions, UNION or subqueries in the select list); read it with GET /table/<view>/read`,
    headers: { Allow: 'Empty: the view takes no writes' },
  },
  INTERNAL_ERROR: { status: 500, stages: ['request'], message: 'Internal server error' },

  // guard.
  ACCESS_DENIED: {
    status: 401,
    stages: ['guard'],
    message: 'Access Denied',
    headers: {
      'WWW-Authenticate':
        '`Bearer`; for an expired token `Bearer error="invalid_token", error_description="The access token expired"` (RFC 6750)',
    },
  },

  // guard and password: identity (docs/auth.md).
  /** A provider's token names keys the gateway could not fetch (its JWKS did not answer). */
  IDENTITY_PROVIDER_UNAVAILABLE: {
    status: 503,
    stages: ['guard'],
    message: "The identity provider's keys could not be fetched; retry in a few seconds",
    headers: { 'Retry-After': 'Always 5 (seconds)' },
  },
  WRONG_PASSWORD: {
    status: 403,
    stages: ['password'],
    message: "'old_password' is not the user's password",
  },
  /** `POST /auth/password` with a provider's token: that password is the provider's. */
  NOT_OWN_USER: {
    status: 403,
    stages: ['password'],
    message:
      'This user signs in through the identity provider: change the password there, not here',
  },

  // json-body.
  INVALID_JSON: { status: 400, stages: ['json-body'], message: 'Request body is not valid JSON' },
  BODY_TOO_DEEP: {
    status: 400,
    stages: ['json-body'],
    message: (limit: number) =>
      `The JSON body nests arrays and objects deeper than ${limit} levels`,
  },
  INVALID_BODY: { status: 400, stages: ['json-body', 'upload'], message: detail },
  BODY_TOO_LARGE: { status: 413, stages: ['json-body'], message: 'Request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    stages: ['json-body'],
    message: "Content-Type must be 'application/json'",
  },
  // Any other client error Fastify's body parsing finds.
  BAD_REQUEST: { status: 400, stages: ['json-body'], message: 'The request is not valid' },

  // register and login.
  USER_EXISTS: { status: 409, stages: ['register'], message: 'User already exists' },
  REGISTRATION_CLOSED: { status: 403, stages: ['register'], message: 'Registration is closed' },

  // policy (docs/policies.md): an action the role may not do on a table it can read, or files; a
  // written row outside the role's where.
  /**
   * An action the role may not do is the bare `Forbidden`; a create or update naming columns the
   * role may read but not write names them (docs/policies.md), as POLICY_VIOLATION names its.
   */
  FORBIDDEN: {
    status: 403,
    stages: ['policy-action'],
    message: (write?: ColumnWrite) =>
      write === undefined
        ? 'Forbidden'
        : `Forbidden: this role's policy for ${write.action} on '${write.table}' does not let it write ${write.columns.length > 1 ? 'columns' : 'column'} ${write.columns.map((column) => `'${column}'`).join(', ')}`,
  },
  POLICY_VIOLATION: { status: 403, stages: ['policy-rows'], message: detail },
  INVALID_CREDENTIALS: {
    status: 401,
    stages: ['login'],
    message: 'Invalid email or password',
  },
  TOO_MANY_ATTEMPTS: {
    status: 429,
    stages: ['login'],
    message: (retryAfterSeconds: number) =>
      `Too many failed login attempts; retry in ${retryAfterSeconds} seconds`,
    headers: { 'Retry-After': 'Seconds until login is allowed again' },
  },
  TOO_MANY_REQUESTS: {
    status: 429,
    stages: ['register', 'login'],
    message: (retryAfterSeconds: number) =>
      `Too many registrations or failed logins from this address; retry in ${retryAfterSeconds} seconds`,
    headers: { 'Retry-After': 'Seconds until this address may register or fail a login again' },
  },

  // Load bounds (per client: requests in progress, argon2 work; for the whole server: the
  // argon2 queue): come back in a second.
  TOO_MANY_CONCURRENT_REQUESTS: {
    status: 429,
    stages: ['request'],
    message: 'Too many requests from this address at once; retry in 1 second',
    headers: { 'Retry-After': 'Always 1 (second)' },
  },
  SERVER_BUSY: {
    status: 503,
    stages: ['register', 'login'],
    message: 'The server is busy; retry in 1 second',
    headers: { 'Retry-After': 'Always 1 (second)' },
  },

  // deep insert (docs/writes.md): a create body holding rows of its to-many relations.
  DEEP_INSERT_KEY_MISMATCH: {
    status: 400,
    stages: ['deep-insert'],
    message: (relation: string, column: string) =>
      `A row of '${relation}' gives '${column}' a value other than its parent's key: leave it out, the parent's key fills it`,
  },
  DEEP_INSERT_KEY_UNKNOWN: {
    status: 400,
    stages: ['deep-insert'],
    message: (relation: string, column: string) =>
      `The rows of '${relation}' take the parent's '${column}', which the body does not give and MySQL does not make: give it`,
  },
  DEEP_INSERT_UNSUPPORTED: { status: 400, stages: ['deep-insert'], message: detail },

  // $batch (docs/odata-batch.md): the envelope; each request in it answers for itself.
  BATCH_SYNTAX: { status: 400, stages: ['batch'], message: detail },
  BATCH_LIMIT: { status: 400, stages: ['batch'], message: detail },
  BATCH_TOO_LARGE: {
    status: 413,
    stages: ['batch'],
    message: (limit: number) => `The batch is larger than ${limit} bytes`,
  },
  BATCH_DEPENDENCY_FAILED: {
    status: 424,
    stages: ['batch'],
    message: (id: string) =>
      `Not run: request or change set '${id}', which this one depends on, failed`,
  },
  BATCH_MEDIA_TYPE: {
    status: 415,
    stages: ['batch'],
    message: "Content-Type must be 'application/json' or 'multipart/mixed' with a boundary",
  },

  // table, read options, key, values, rows: the request against the schema.
  UNKNOWN_TABLE: {
    status: 404,
    stages: ['table'],
    message: (table: string, hint = '') => `Table '${table}' does not exist${hint}`,
  },
  INVALID_QUERY: { status: 400, stages: ['read-options', 'key'], message: detail },
  /** `?filter=…` (or a `$filter` a shell replaced with nothing) would silently read every row. */
  OPTION_WITHOUT_DOLLAR: {
    status: 400,
    stages: ['read-options'],
    message: (key: string, meant: string) =>
      meant === ''
        ? "A query parameter has no name ('?=…'): did a shell replace $filter inside double quotes? Quote the URL with single quotes or write %24filter"
        : `Unknown query parameter '${key}': did you mean '${meant}'?`,
  },
  FILTER_SYNTAX: { status: 400, stages: ['read-options'], message: detail },
  /** A date/time literal or a function meets a column of the wrong type (docs/filters.md). */
  FILTER_TYPE: { status: 400, stages: ['read-options'], message: detail },
  LIMIT_EXCEEDED: { status: 400, stages: ['read-options', 'rows'], message: detail },
  UNKNOWN_COLUMN: {
    status: 400,
    stages: ['read-options', 'key', 'values'],
    message: (table: string, column: string, hint = '') =>
      `Column '${column}' does not exist in table '${table}'${hint}`,
    schemaMiss: true,
  },
  /** `$expand`, a path or a lambda names a relation the table does not have (or the role cannot follow). */
  UNKNOWN_RELATION: {
    status: 400,
    stages: ['read-options'],
    message: (table: string, relation: string, hint = '') =>
      `Relation '${relation}' does not exist on table '${table}'${hint}`,
    schemaMiss: true,
  },
  // $apply (totals): its grammar, and an aggregate or compute() function on a column of a type
  // it does not take (`sum(name)`).
  APPLY_SYNTAX: { status: 400, stages: ['read-options'], message: detail },
  APPLY_TYPE: { status: 400, stages: ['read-options'], message: detail },
  INVALID_VALUE: { status: 400, stages: ['key', 'values', 'arguments'], message: detail },
  /** A `$skiptoken` edited, cut short, or sent with another table or other read options. */
  BAD_SKIPTOKEN: {
    status: 400,
    stages: ['read-options'],
    message:
      "The $skiptoken is not one this read's page before gave: send the Link of the page before unchanged, with the same table, $filter, $orderby, $select and $expand",
  },
  GENERATED_COLUMN: {
    status: 400,
    stages: ['values'],
    message: (table: string, column: string) =>
      `Column '${column}' of table '${table}' is generated by MySQL and cannot be written`,
  },

  /** An expanded to-many relation's rows of one parent row, cut short by MySQL's max_allowed_packet. */
  RELATED_ROWS_TOO_LARGE: {
    status: 400,
    stages: ['stream'],
    message: (relation: string) =>
      `The related rows of '${relation}' for one row are more than MySQL sends in one value (max_allowed_packet); read them in pages with ${relation}($top=…)`,
  },
  /** The read's cost estimate is past the caller's budget: refused before it runs (docs/reading.md). */
  QUERY_TOO_COSTLY: {
    status: 400,
    stages: ['read-cost'],
    message: (estimate: number, limit: number, option: string) =>
      `This read is estimated at ${estimate} row reads, over the limit of ${limit} (${option}): nest fewer lambdas or to-many $expand levels, or give each expanded relation a $top`,
  },

  // routines (`/rpc/<name>`, docs/routines.md): the routine, its arguments, its own refusals.
  UNKNOWN_ROUTINE: {
    status: 404,
    stages: ['routine'],
    message: (name: string, hint = '') => `Routine '${name}' does not exist${hint}`,
  },
  /** `GET /rpc/<name>` where only a procedure has the name (functions answer GET). */
  PROCEDURE_NEEDS_POST: {
    status: 405,
    stages: ['routine'],
    message: (name: string) => `'${name}' is a stored procedure: call it with POST`,
    headers: { Allow: 'POST' },
  },
  UNKNOWN_PARAMETER: {
    status: 400,
    stages: ['arguments'],
    message: (routine: string, parameter: string, note = '') =>
      `Routine '${routine}' has no parameter '${parameter}' to send${note}`,
  },
  MISSING_PARAMETER: {
    status: 400,
    stages: ['arguments'],
    message: (routine: string, parameter: string) =>
      `Parameter '${parameter}' of routine '${routine}' is missing: every IN and INOUT parameter is required (send null for NULL)`,
  },
  INVALID_ARGUMENTS: { status: 400, stages: ['arguments'], message: detail },
  /** `SIGNAL SQLSTATE '45000'` (or any user SIGNAL) in a routine or trigger: its MESSAGE_TEXT. */
  ROUTINE_ERROR: { status: 400, stages: ['routine-call'], message: detail },
  /**
   * A procedure returned with a transaction of its own still open: the gateway rolled it back
   * (docs/routines.md). The routine, not the request, is at fault, hence a 5xx that is no bug of
   * the gateway's: 502, an upstream that answered wrongly.
   */
  ROUTINE_TRANSACTION_OPEN: {
    status: 502,
    stages: ['routine-call'],
    message:
      'The procedure returned with its transaction still open (no COMMIT or ROLLBACK): the gateway rolled it back, so nothing done in that transaction was kept',
  },
  ROUTINE_RESULT_TOO_LARGE: {
    status: 400,
    stages: ['routine-call'],
    message: (limitChars: number) =>
      `The routine's results are more than ${limitChars} characters of JSON, the most one answer carries: it was stopped (what it wrote before may stay)`,
  },

  // execute and stream.
  DATABASE_UNAVAILABLE: { status: 503, stages: ['execute'], message: 'Database unavailable' },
  DATABASE_BUSY: {
    status: 503,
    stages: ['execute'],
    message: 'Every database connection stayed busy for too long; try again',
  },
  // The connection broke after the COMMIT (or the one autocommit statement) was sent and before
  // its answer: the write may or may not be stored, so it is not retried (execute/retry.ts).
  WRITE_OUTCOME_UNKNOWN: {
    status: 503,
    stages: ['write'],
    message:
      'The connection to the database was lost while the write was committing; it may or may not have been applied. Read the rows before retrying',
  },
  QUERY_TIMEOUT: {
    status: 504,
    stages: ['execute'],
    message: 'The query took longer than the configured time limit',
  },
  // Never an answer of its own: the response has begun and is cut short; logged.
  STREAM_STALLED: {
    status: 408,
    stages: ['stream'],
    message: (stallMs: number) =>
      `The client took nothing for ${stallMs} ms: the response was cut and its database connection freed`,
  },
  // Never an answer of its own either: a client that reads, but below --min-read-rate.
  STREAM_TOO_SLOW: {
    status: 408,
    stages: ['stream'],
    message: (bytes: number, waitedMs: number, minRate: number) =>
      `The client took ${bytes} bytes in ${waitedMs} ms of waiting for it, less than ${minRate} bytes a second: the response was cut and its database connection freed`,
  },
  // Never an answer of its own either: a client that took nothing while others waited for the
  // connection its read held (execute/acquire.ts).
  STREAM_TAKEN_BACK: {
    status: 408,
    stages: ['stream'],
    message: (quietMs: number) =>
      `The client took nothing for ${quietMs} ms while other requests waited for a database connection: the response was cut and its connection handed on`,
  },
  // An answer built whole before it is sent (docs/reading.md): the read's options can make it
  // smaller ($top, $select, a paged $expand), hence with them.
  ANSWER_TOO_LARGE: {
    status: 400,
    stages: ['read-options'],
    message: (limitBytes: number) =>
      `The answer is more than ${limitBytes} bytes, the most one built whole before it is sent may take (--max-answer-bytes): ask for fewer rows ($top), fewer columns ($select) or fewer related rows ($expand with $top)`,
  },

  // upload (`POST /upload`).
  NOT_MULTIPART: {
    status: 415,
    stages: ['upload'],
    message: "Content-Type must be 'multipart/form-data'",
  },
  MALFORMED_MULTIPART: {
    status: 400,
    stages: ['upload'],
    message: 'The multipart/form-data body is malformed or incomplete',
  },
  WRONG_FILE_FIELD: {
    status: 400,
    stages: ['upload'],
    message: (field: string) => `Files must be sent in form fields named 'files', not '${field}'`,
  },
  NO_FILES: {
    status: 400,
    stages: ['upload'],
    message: "No file was sent: add one or more parts named 'files'",
  },
  FILE_TOO_LARGE: {
    status: 413,
    stages: ['upload'],
    message: (limitBytes: number) => `A file is larger than the limit of ${limitBytes} bytes`,
  },
  TOO_MANY_FILES: {
    status: 413,
    stages: ['upload'],
    message: (limit: number) => `At most ${limit} files may be sent in one request`,
  },
  TOO_MANY_PARTS: {
    status: 413,
    stages: ['upload'],
    message: 'The multipart body has too many parts or fields',
  },
  FORBIDDEN_FIELD_NAME: {
    status: 400,
    stages: ['upload'],
    message:
      "Form field names that are Object.prototype properties ('__proto__', 'constructor', …) are not allowed",
  },
  INVALID_HOST: {
    status: 400,
    stages: ['upload'],
    message: 'The Host header is missing or is not a plain host[:port]',
  },

  // files (`GET /@/<filename>`).
  FILE_NOT_FOUND: { status: 404, stages: ['files'], message: 'File not found' },
  RANGE_NOT_SATISFIABLE: {
    status: 416,
    stages: ['files'],
    message: 'The requested range is not satisfiable',
  },
  PRECONDITION_FAILED: {
    status: 412,
    stages: ['files', 'precondition'],
    // A file's If-Match or If-Unmodified-Since; a row's If-Match names its table (docs/caching.md).
    message: (table?: string, keyed = true) =>
      table === undefined
        ? 'A precondition of the request failed'
        : keyed
          ? `The row of '${table}' no longer has the ETag given in If-Match (it changed, or is gone): nothing was changed; read it again with read(<key>,<value>)`
          : `If-Match names one row's ETag: it applies to update(<key>,<value>) and delete(<key>,<value>) by the primary key or a unique column, not to a $filter write or a key that may match many rows; nothing was changed`,
  },

  // prefer and row: `Prefer: max-affected`, read(<key>,<value>) (docs/writes.md).
  INVALID_PREFERENCE: { status: 400, stages: ['prefer'], message: detail },
  TOO_MANY_ROWS: {
    status: 400,
    stages: ['prefer'],
    message: (affected: number, max: number) =>
      `The request would change ${affected} rows, more than Prefer: max-affected=${max}; nothing was changed`,
  },
  ROW_NOT_FOUND: {
    status: 404,
    stages: ['row'],
    message: (table: string) => `No row of '${table}' has that key`,
  },

  // odata: the OData service (docs/odata.md).
  /** A URL form, query option, header or body annotation of OData that tablegate does not serve. */
  ODATA_UNSUPPORTED: { status: 400, stages: ['odata'], message: detail },
  /** A write to an entity set whose key is formed of its columns: it has no key of MySQL's. */
  ODATA_READ_ONLY: {
    status: 405,
    stages: ['odata'],
    message: (set: string) =>
      `Entity set '${set}' has no primary key and no unique key of NOT NULL columns: it is read-only (docs/odata.md)`,
    headers: { Allow: 'GET' },
  },

  // feed: `GET /table/<t>/changes` (docs/changes.md).
  UNSUPPORTED_IN_FEED: { status: 400, stages: ['feed'], message: detail },
  BAD_FEED_POSITION: {
    status: 400,
    stages: ['feed'],
    message:
      'The position (Last-Event-ID or $since) is not one this change feed gave: send the id of an event unchanged',
  },
  FEED_POSITION_GONE: {
    status: 410,
    stages: ['feed'],
    message:
      'The binary log no longer holds that position (purged): read the table again, then follow its changes without Last-Event-ID or $since',
  },
  FEED_UNAVAILABLE: {
    status: 503,
    stages: ['feed'],
    message: (reason: string) => `The change feed is off: ${reason}`,
  },
} as const satisfies Readonly<Record<string, ErrorSpec>>;

/**
 * MySQL's refusals a client can cause, under MySQL's (or MariaDB's) error name, with the status
 * each answers. MySQL's own sentence is passed on only for data errors, which name a column or a
 * value, never the query; the others get a plain sentence of ours (foreign-key messages quote the
 * whole constraint, privilege messages name the database user and host, view messages name the
 * statement). Error numbers differ between MySQL and MariaDB in places; both names are listed.
 */
export const MYSQL_ERRORS: Readonly<
  Record<string, { readonly status: number; readonly message?: string; readonly schemaMiss?: true }>
> = {
  ER_BAD_NULL_ERROR: { status: 400 },
  ER_NO_DEFAULT_FOR_FIELD: { status: 400 },
  ER_NO_DEFAULT_FOR_VIEW_FIELD: { status: 400 },
  ER_DATA_TOO_LONG: { status: 400 },
  ER_WARN_DATA_OUT_OF_RANGE: { status: 400 },
  ER_TRUNCATED_WRONG_VALUE: { status: 400 },
  ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: { status: 400 },
  WARN_DATA_TRUNCATED: { status: 400 },
  ER_WRONG_VALUE_FOR_TYPE: { status: 400 },
  ER_INVALID_JSON_TEXT: { status: 400 },
  ER_INVALID_JSON_TEXT_IN_PARAM: { status: 400 },
  ER_INVALID_CHARACTER_STRING: { status: 400 },
  ER_DIVISION_BY_ZERO: { status: 400 },
  ER_CHECK_CONSTRAINT_VIOLATED: { status: 400 },
  ER_CONSTRAINT_FAILED: { status: 400 },
  ER_NON_UPDATABLE_TABLE: {
    status: 400,
    message:
      'Rows cannot be updated or deleted through this view: MySQL writes only through simple views (no GROUP BY, DISTINCT, aggregate functions, UNION or subqueries)',
  },
  ER_VIEW_CHECK_FAILED: {
    status: 400,
    message:
      'The row would not be visible through the view afterwards, and the view has WITH CHECK OPTION',
  },
  ER_VIEW_NO_INSERT_FIELD_LIST: { status: 400 },
  ER_VIEW_MULTIUPDATE: { status: 400 },
  ER_VIEW_DELETE_MERGE_VIEW: { status: 400 },
  ER_NON_INSERTABLE_TABLE: {
    status: 400,
    message:
      'Rows cannot be inserted through this view: MySQL writes only through simple views (no GROUP BY, DISTINCT, aggregate functions, UNION or computed columns)',
  },
  ER_WRONG_VALUE: { status: 400 },
  ER_DUP_ENTRY: { status: 409 },
  ER_DUP_ENTRY_WITH_KEY_NAME: { status: 409 },
  ER_NO_REFERENCED_ROW: {
    status: 409,
    message: 'A referenced row does not exist (foreign key constraint)',
  },
  ER_NO_REFERENCED_ROW_2: {
    status: 409,
    message: 'A referenced row does not exist (foreign key constraint)',
  },
  ER_ROW_IS_REFERENCED: {
    status: 409,
    message: 'The row is referenced by another table (foreign key constraint)',
  },
  ER_ROW_IS_REFERENCED_2: {
    status: 409,
    message: 'The row is referenced by another table (foreign key constraint)',
  },
  ER_BAD_FIELD_ERROR: {
    status: 400,
    schemaMiss: true,
    message:
      'A column of the request no longer exists: the table changed after the gateway read it',
  },
  ER_TABLEACCESS_DENIED_ERROR: {
    status: 403,
    message: "The gateway's database user is not allowed to do this on this table",
  },
  ER_COLUMNACCESS_DENIED_ERROR: {
    status: 403,
    message: "The gateway's database user is not allowed to do this on this column",
  },
  ER_DBACCESS_DENIED_ERROR: {
    status: 403,
    message: "The gateway's database user is not allowed to use this database",
  },
  ER_SPECIFIC_ACCESS_DENIED_ERROR: {
    status: 403,
    message: "The gateway's database user lacks the privilege for this",
  },
  ER_PROCACCESS_DENIED_ERROR: {
    status: 403,
    message: "The gateway's database user is not allowed to run this routine",
  },
  // Writes: values, generated columns, views, locks (MySQL and MariaDB names).
  ER_WARN_NULL_TO_NOTNULL: { status: 400 },
  ER_CANNOT_CONVERT_CHARACTER: { status: 400 },
  ER_DATETIME_FUNCTION_OVERFLOW: { status: 400 },
  ER_INVALID_TYPE_FOR_JSON: { status: 400 },
  ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN: { status: 400 },
  ER_WARNING_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN: { status: 400 },
  ER_NONUPDATEABLE_COLUMN: { status: 400 },
  ER_VIEW_PREVENT_UPDATE: { status: 400 },
  // Answered only after WRITE_ATTEMPTS tries (execute/retry.ts).
  ER_LOCK_DEADLOCK: {
    status: 409,
    message: `The write collided with other transactions (a deadlock, or on a cluster a write on another node) ${WRITE_ATTEMPTS} times and was rolled back each time; nothing was written, try again`,
  },
  ER_LOCK_WAIT_TIMEOUT: {
    status: 409,
    message:
      'The rows are locked by another transaction and the wait timed out; nothing was written, try again',
  },
  // A write to a server running read-only: a replica or standby that `-h` or a proxy settled on,
  // a primary being switched over (MySQL's super_read_only too), MySQL's innodb_read_only. The
  // server's state, not the client's request: 503, as for a server that is down
  // (docs/operations.md).
  ER_OPTION_PREVENTS_STATEMENT: {
    status: 503,
    message:
      'The database server is read-only right now (a replica, or a primary being switched over); nothing was written',
  },
  ER_READ_ONLY_MODE: {
    status: 503,
    message: 'The database server is read-only right now; nothing was written',
  },
  // A value with characters the column's character set cannot hold (a latin1 column filtered or
  // matched with 'Ā' or an emoji): MySQL refuses to compare them (found by filter fuzzing).
  ER_CANT_AGGREGATE_2COLLATIONS: {
    status: 400,
    message:
      "A value holds characters that the column's character set cannot store, so it cannot be compared with the column",
  },
  ER_CANT_AGGREGATE_3COLLATIONS: {
    status: 400,
    message:
      "A value holds characters that the column's character set cannot store, so it cannot be compared with the column",
  },
  ER_CANT_AGGREGATE_NCOLLATIONS: {
    status: 400,
    message:
      "A value holds characters that the column's character set cannot store, so it cannot be compared with the column",
  },
  // A table dropped after the schema was read.
  ER_NO_SUCH_TABLE: { status: 404, schemaMiss: true },
  // Routines (docs/routines.md): dropped or changed after the schema was read.
  ER_SP_DOES_NOT_EXIST: {
    status: 404,
    schemaMiss: true,
    message: 'A routine no longer exists: the database changed after the gateway read it',
  },
  ER_SP_WRONG_NO_OF_ARGS: {
    status: 400,
    schemaMiss: true,
    message: "The routine's parameters changed after the gateway read them; try again",
  },
};

export type ErrorCode = keyof typeof ERRORS;

type Details<C extends ErrorCode> = (typeof ERRORS)[C]['message'] extends (
  ...details: infer A
) => string
  ? A
  : [];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** A catalogue code, or a MySQL error name (db/errors.ts). */
    readonly code: string,
    message: string,
    /** Extra response headers (`Retry-After`, `WWW-Authenticate`, …). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The request named something the cached schema does not know (the cache re-reads it). */
  get schemaMiss(): boolean {
    const spec =
      (ERRORS as Readonly<Record<string, ErrorSpec>>)[this.code] ?? MYSQL_ERRORS[this.code];
    return spec?.schemaMiss === true;
  }
}

/** The catalogue's error `code`, its sentence made from `details`. */
export function apiError<C extends ErrorCode>(code: C, ...details: Details<C>): ApiError {
  const spec: ErrorSpec = ERRORS[code];
  const message =
    typeof spec.message === 'string'
      ? spec.message
      : (spec.message as (...d: Details<C>) => string)(...details);
  return new ApiError(spec.status, code, message);
}

const withHeaders = (error: ApiError, headers: Readonly<Record<string, string>>) =>
  new ApiError(error.status, error.code, error.message, headers);

// Named factories, one per code a stage raises, so call sites read as sentences.
export const invalidQuery = (message: string) => apiError('INVALID_QUERY', message);
export const deepInsertKeyMismatch = (relation: string, column: string) =>
  apiError('DEEP_INSERT_KEY_MISMATCH', relation, column);
export const deepInsertKeyUnknown = (relation: string, column: string) =>
  apiError('DEEP_INSERT_KEY_UNKNOWN', relation, column);
export const deepInsertUnsupported = (message: string) =>
  apiError('DEEP_INSERT_UNSUPPORTED', message);
export const batchSyntax = (message: string) => apiError('BATCH_SYNTAX', message);
export const batchLimit = (message: string) => apiError('BATCH_LIMIT', message);
export const batchTooLarge = (limit: number) => apiError('BATCH_TOO_LARGE', limit);
export const batchMediaType = () => apiError('BATCH_MEDIA_TYPE');
export const batchDependencyFailed = (id: string) => apiError('BATCH_DEPENDENCY_FAILED', id);
export const odataUnsupported = (message: string) => apiError('ODATA_UNSUPPORTED', message);
export const odataReadOnly = (set: string) =>
  withHeaders(apiError('ODATA_READ_ONLY', set), { Allow: 'GET' });
export const optionWithoutDollar = (key: string, meant: string) =>
  apiError('OPTION_WITHOUT_DOLLAR', key, meant);
export const filterSyntax = (message: string) => apiError('FILTER_SYNTAX', message);
export const filterType = (message: string) => apiError('FILTER_TYPE', message);
export const limitExceeded = (message: string) => apiError('LIMIT_EXCEEDED', message);
export const applySyntax = (message: string) => apiError('APPLY_SYNTAX', message);
export const applyType = (message: string) => apiError('APPLY_TYPE', message);
/**
 * `known`: the names the caller may see, for a "did you mean" (never a hidden one). `quoted`: a
 * `$filter` wrote the name in double quotes, which name a column (docs/filters.md): likely a
 * string meant, so the answer shows it in single quotes.
 */
export const unknownColumn = (
  table: string,
  column: string,
  known: readonly string[] = [],
  quoted = false,
) =>
  apiError(
    'UNKNOWN_COLUMN',
    table,
    column,
    `${didYouMean(column, known)}${quoted ? singleQuotesHint(column) : ''}`,
  );
/** What a double-quoted name would be as a `$filter` string (docs/filters.md). */
export const singleQuotesHint = (text: string) =>
  ` (strings take single quotes: '${text.replaceAll("'", "''")}')`;
export const unknownTable = (table: string, known: readonly string[] = []) =>
  apiError('UNKNOWN_TABLE', table, didYouMean(table, known));
export const unknownRelation = (table: string, relation: string, known: readonly string[] = []) =>
  apiError('UNKNOWN_RELATION', table, relation, didYouMean(relation, known));
export const relatedRowsTooLarge = (relation: string) =>
  apiError('RELATED_ROWS_TOO_LARGE', relation);
export const queryTooCostly = (estimate: number, limit: number, option: string) =>
  apiError('QUERY_TOO_COSTLY', estimate, limit, option);
export const invalidBody = (message: string) => apiError('INVALID_BODY', message);
export const bodyTooDeep = (limit: number) => apiError('BODY_TOO_DEEP', limit);
export const requestTimeout = () => apiError('REQUEST_TIMEOUT');
export const unsupportedMediaType = () => apiError('UNSUPPORTED_MEDIA_TYPE');
export const malformedUrl = () => apiError('MALFORMED_URL');
export const nonAsciiUrl = () => apiError('NON_ASCII_URL');
export const routeNotFound = (method: string, url: string) => apiError('NOT_FOUND', method, url);
export const databaseUnavailable = () => apiError('DATABASE_UNAVAILABLE');
export const databaseBusy = () => apiError('DATABASE_BUSY');
export const writeOutcomeUnknown = () => apiError('WRITE_OUTCOME_UNKNOWN');
export const queryTimeout = () => apiError('QUERY_TIMEOUT');
export const streamStalled = (stallMs: number) => apiError('STREAM_STALLED', stallMs);
export const streamTooSlow = (bytes: number, waitedMs: number, minRate: number) =>
  apiError('STREAM_TOO_SLOW', bytes, waitedMs, minRate);
export const streamTakenBack = (quietMs: number) => apiError('STREAM_TAKEN_BACK', quietMs);
export const answerTooLarge = (limitBytes: number) => apiError('ANSWER_TOO_LARGE', limitBytes);
export const internalError = () => apiError('INTERNAL_ERROR');
export const methodNotAllowed = (method: string, allowed: readonly string[]) =>
  withHeaders(apiError('METHOD_NOT_ALLOWED', method, allowed.join(', ')), {
    Allow: allowed.join(', '),
  });
export const viewNotWritable = (view: string) =>
  withHeaders(apiError('VIEW_NOT_WRITABLE', view), { Allow: '' });
export const accessDenied = () =>
  withHeaders(apiError('ACCESS_DENIED'), { 'WWW-Authenticate': 'Bearer' });
/** The same 401, plus RFC 6750 §3's hint that logging in again helps. */
export const tokenExpired = () =>
  withHeaders(apiError('ACCESS_DENIED'), {
    'WWW-Authenticate':
      'Bearer error="invalid_token", error_description="The access token expired"',
  });
export const identityProviderUnavailable = () =>
  withHeaders(apiError('IDENTITY_PROVIDER_UNAVAILABLE'), { 'Retry-After': '5' });
export const wrongPassword = () => apiError('WRONG_PASSWORD');
export const notOwnUser = () => apiError('NOT_OWN_USER');
export const invalidCredentials = () => apiError('INVALID_CREDENTIALS');
export const userExists = () => apiError('USER_EXISTS');
export const registrationClosed = () => apiError('REGISTRATION_CLOSED');
export const forbidden = () => apiError('FORBIDDEN');
export const forbiddenColumns = (
  table: string,
  action: 'create' | 'update',
  columns: readonly string[],
) => apiError('FORBIDDEN', { table, action, columns });
export const policyViolation = (message: string) => apiError('POLICY_VIOLATION', message);
export const tooManyAttempts = (retryAfterSeconds: number) =>
  withHeaders(apiError('TOO_MANY_ATTEMPTS', retryAfterSeconds), {
    'Retry-After': String(retryAfterSeconds),
  });
export const tooManyRequests = (retryAfterSeconds: number) =>
  withHeaders(apiError('TOO_MANY_REQUESTS', retryAfterSeconds), {
    'Retry-After': String(retryAfterSeconds),
  });
const retryInASecond = { 'Retry-After': '1' };
export const tooManyConcurrent = () =>
  withHeaders(apiError('TOO_MANY_CONCURRENT_REQUESTS'), retryInASecond);
export const serverBusy = () => withHeaders(apiError('SERVER_BUSY'), retryInASecond);
export const notMultipart = () => apiError('NOT_MULTIPART');
export const malformedMultipart = () => apiError('MALFORMED_MULTIPART');
export const wrongFileField = (field: string) => apiError('WRONG_FILE_FIELD', field);
export const noFiles = () => apiError('NO_FILES');
export const fileTooLarge = (limitBytes: number) => apiError('FILE_TOO_LARGE', limitBytes);
export const tooManyFiles = (limit: number) => apiError('TOO_MANY_FILES', limit);
export const tooManyParts = () => apiError('TOO_MANY_PARTS');
export const invalidHost = () => apiError('INVALID_HOST');
export const fileNotFound = () => apiError('FILE_NOT_FOUND');
export const rangeNotSatisfiable = (headers: Readonly<Record<string, string>>) =>
  withHeaders(apiError('RANGE_NOT_SATISFIABLE'), headers);
/** A file's precondition (no details), or If-Match on a write of `table` (docs/caching.md). */
export const preconditionFailed = (table?: string, keyed = true) =>
  table === undefined
    ? apiError('PRECONDITION_FAILED')
    : apiError('PRECONDITION_FAILED', table, keyed);
export const forbiddenFieldName = () => apiError('FORBIDDEN_FIELD_NAME');
export const invalidPreference = (message: string) => apiError('INVALID_PREFERENCE', message);
export const tooManyRows = (affected: number, max: number) =>
  apiError('TOO_MANY_ROWS', affected, max);
export const rowNotFound = (table: string) => apiError('ROW_NOT_FOUND', table);
export const invalidValue = (message: string) => apiError('INVALID_VALUE', message);
export const badSkiptoken = () => apiError('BAD_SKIPTOKEN');
export const unsupportedInFeed = (message: string) => apiError('UNSUPPORTED_IN_FEED', message);
export const badFeedPosition = () => apiError('BAD_FEED_POSITION');
export const feedPositionGone = () => apiError('FEED_POSITION_GONE');
export const feedUnavailable = (reason: string) => apiError('FEED_UNAVAILABLE', reason);
export const generatedColumn = (table: string, column: string) =>
  apiError('GENERATED_COLUMN', table, column);
/** `known`: the routines the caller may call, for a "did you mean" (never a withheld one). */
export const unknownRoutine = (name: string, known: readonly string[] = []) =>
  apiError('UNKNOWN_ROUTINE', name, didYouMean(name, known));
export const procedureNeedsPost = (name: string) =>
  withHeaders(apiError('PROCEDURE_NEEDS_POST', name), { Allow: 'POST' });
export const unknownParameter = (routine: string, parameter: string, note?: string) =>
  apiError('UNKNOWN_PARAMETER', routine, parameter, note);
export const missingParameter = (routine: string, parameter: string) =>
  apiError('MISSING_PARAMETER', routine, parameter);
export const invalidArguments = (message: string) => apiError('INVALID_ARGUMENTS', message);
export const routineError = (message: string) => apiError('ROUTINE_ERROR', message);
export const routineTransactionOpen = () => apiError('ROUTINE_TRANSACTION_OPEN');
export const routineResultTooLarge = (limitChars: number) =>
  apiError('ROUTINE_RESULT_TOO_LARGE', limitChars);
