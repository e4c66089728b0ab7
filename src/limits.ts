/**
 * Every limit and timeout the gateway enforces, in one place: the stages read them from here,
 * and so do the API description and the documentation's figures (never copied as literals).
 */

// Read options (docs/filters.md, docs/reading.md).
/** Bytes of `$filter` text (UTF-8). */
export const MAX_FILTER_BYTES = 4096;
/** Levels of parentheses and `not` in a `$filter`. */
export const MAX_NESTING = 64;
/** Values in one `in (…)` list. */
export const MAX_IN_VALUES = 1000;
/** Characters of all contains/startswith/endswith patterns of one `$filter` together. */
export const MAX_PATTERN_CHARS = 100;
/**
 * Function calls in one `$filter` (and so in one policy `where`): each contains, startswith,
 * endswith and each column function (tolower, year, …) counts one. MySQL evaluates every one on
 * every row the rest of the filter leaves, and no index helps, so the cost of a filter grows
 * with the number of calls (measured in bench/README.md, "Measurements behind limits"). 32 is a
 * search for three words in five columns with tolower, and an eighth of that.
 */
export const MAX_FILTER_CALLS = 32;

// Related rows ($expand, paths, lambdas).
/** Levels of relations one read may follow: `$expand=a/b/c`, or nested `$expand` options. */
export const MAX_EXPAND_DEPTH = 3;
/** Relations one read may expand in all (every path segment of every `$expand` item counts). */
export const MAX_EXPANDED_RELATIONS = 10;

// Totals ($apply).
/** Bytes of `$apply` text (UTF-8): its filter() steps share the `$filter` limits besides. */
export const MAX_APPLY_BYTES = 8192;
/**
 * compute() items, groupby values and aggregates of one `$apply` together: each is an expression
 * MySQL evaluates on every row, and COUNT(DISTINCT …) keeps a set of values per group.
 */
export const MAX_APPLY_ITEMS = 32;

// Writes.
/** Rows one `create` request may insert. */
export const MAX_INSERT_ROWS = 10_000;
/**
 * A write the server rolled back whole (a deadlock, a Galera certification failure) or a Galera
 * node refused (no quorum) is tried this many times in all, on a fresh connection each time,
 * after a random pause between the two bounds (so colliding writers do not collide again in
 * step). A connection lost before the COMMIT was sent counts among them, at most once
 * (execute/retry.ts).
 */
export const WRITE_ATTEMPTS = 3;
export const RETRY_PAUSE_MIN_MS = 5;
export const RETRY_PAUSE_MAX_MS = 50;

// Stored routines (`/rpc/<name>`, docs/routines.md).
/**
 * Characters of JSON a routine call's result sets may take together. The answer is built whole
 * before it is sent (a routine's SIGNAL after its first SELECT must still answer 400, and its
 * OUT values come last), so unlike a read it does not stream: past this the routine is stopped
 * and the call answers 400 ROUTINE_RESULT_TOO_LARGE. Page big results in the routine, or read
 * them from a table or view.
 */
export const MAX_ROUTINE_RESULT_CHARS = 32 * 1024 * 1024;

// Auth mode (docs/auth.md).
export const EMAIL_MAX_LENGTH = 254;
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;
/** More than 10 failed logins in a minute for one IP and email → 429 (docs/auth.md). */
export const MAX_FAILED_LOGINS = 10;
/** The window of the login and registration counts. */
export const LIMITS_WINDOW_MS = 60_000;
/** Every registration and failed login costs an argon2 hash: at most this many per minute and IP. */
export const MAX_REGISTRATIONS_PER_IP = 60;
export const MAX_FAILED_LOGINS_PER_IP = 100;
/**
 * argon2 runs on libuv's thread pool (4 threads), which file uploads and downloads also use: at
 * most 3 hashes at once (fewer on fewer cores) keep a thread free for them. One address may
 * have 8 hashes running or waiting; 32 may wait in all (a wait of well under a second).
 */
export const ARGON2_MAX_CONCURRENCY = 3;
export const ARGON2_PER_CLIENT = 8;
export const ARGON2_MAX_WAITING = 32;
/**
 * With --redis-url, ARGON2_PER_CLIENT counts across gateways, in a Redis counter whose window
 * ends this long after it started: the +1 of a gateway killed mid-hash (whose −1 never comes)
 * is forgotten by then at the latest: far longer than a hash and its wait take (bench/README.md,
 * "Measurements behind limits").
 */
export const ARGON2_SHARED_WINDOW_MS = 10_000;

// HTTP server.
/** Node's default; a longer request line or header block is answered 431. */
export const MAX_HEADER_BYTES = 16 * 1024;
/** Headers must arrive within this (slowloris: a JSON 408). */
export const HEADERS_TIMEOUT_MS = 30_000;
/** A connection that sends or reads nothing this long is closed. */
export const SOCKET_IDLE_TIMEOUT_MS = 60_000;
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/** On SIGTERM, requests in flight get this long to finish. */
export const SHUTDOWN_GRACE_MS = 10_000;
/** Levels of arrays and objects in a JSON body (MariaDB's JSON functions accept 32, MySQL 100). */
export const MAX_BODY_DEPTH = 64;
/** A result smaller than this is sent in one piece with a Content-Length; a larger one streams. */
export const RESPONSE_CHUNK_BYTES = 64 * 1024;
/**
 * A read fetched whole instead of streamed (plan/small-read.ts): at most this many rows
 * (`$top`), whose widest possible rows together take at most this many bytes.
 */
export const SMALL_READ_MAX_ROWS = 100;
export const SMALL_READ_MAX_BYTES = 256 * 1024;
/**
 * A page that may link to the next (`$top`) is held whole before it is sent, since its Link
 * header names its last row (http/json-rows.ts), up to this many bytes of JSON; a larger page
 * starts at that point and its Link skips the rest of it by count (docs/paging.md). Bounded so that
 * many large pages at once cannot fill the memory.
 */
export const PAGE_HOLD_BYTES = 1024 * 1024;
/**
 * Links of pages read without a `$skiptoken` kept sealed (pipeline/skiptoken.ts), least recently
 * used dropped first, none whose read and position take more characters than this.
 */
export const SEALED_TOKENS = 1024;
export const SEALED_TOKENS_MAX_KEY_CHARS = 1024;
/**
 * Compiled reads kept by table and query string (pipeline/read-cache.ts), least recently used
 * dropped first: at most this many in all (one bound for every table, so a schema of many
 * tables cannot multiply it), and none for a query string longer than this many characters
 * (its entry could be large; such a request is planned every time, as before the cache).
 */
export const READ_CACHE_ENTRIES = 1024;
/**
 * Tokens whose signature and claims were verified, kept so that the next request with the same
 * token skips the signature check and the decoding (auth/authenticator.ts): least recently used dropped first.
 */
export const VERIFIED_TOKENS = 4096;
export const READ_CACHE_MAX_QUERY_CHARS = 2048;
/**
 * A query string is kept on its second sight; the first is remembered in one of these slots, so
 * of a stream of distinct ones (U of them) about SLOTS ÷ U are kept by chance.
 */
export const READ_CACHE_SEEN_SLOTS = READ_CACHE_ENTRIES;
/**
 * Compiled read templates kept by query shape (pipeline/read-shape.ts): a shape stands for every
 * query string that differs only in `$filter`'s integers, so few are needed. A shape is kept on
 * its second sight (the first is remembered in one of as many slots), and its key is at most
 * READ_CACHE_MAX_QUERY_CHARS long.
 */
export const READ_SHAPE_ENTRIES = 256;
/**
 * Body shapes of one-row creates kept per table object (pipeline/insert-shapes.ts): a table is
 * written by few clients' code paths, each naming the same columns every time; past this many,
 * new shapes take the full path.
 */
export const INSERT_SHAPES_PER_TABLE = 8;

// MySQL.
/** A new connection gives up after this (an unreachable host answers 503 within about 2 s). */
export const CONNECT_TIMEOUT_MS = 2000;
/**
 * The longest a ping (`SELECT 1` on the control connection) waits for the server's answer; past
 * it the server counts as not answering: /health says so, the watchdog cuts the statements it
 * waited for, a waiting request gives up, `-h` moves to the next host. A live server answers in
 * milliseconds, under load too (docs/operations.md; bench/README.md, "Measurements behind limits").
 */
export const HEALTH_TIMEOUT_MS = 1000;
/** A request waiting this long for a pool connection asks whether the server is alive. */
export const ALIVE_CHECK_MS = 1000;
/**
 * A statement without its answer this long makes the watchdog ask whether the server is alive
 * (execute/watchdog.ts); it looks every WATCHDOG_TICK_MS. A statement sent to a frozen server is
 * therefore cut within STATEMENT_ALIVE_CHECK_MS + WATCHDOG_TICK_MS + HEALTH_TIMEOUT_MS (1.75 s).
 */
export const STATEMENT_ALIVE_CHECK_MS = 500;
export const WATCHDOG_TICK_MS = 250;
/** How often the waits for a pool connection are checked against their bounds (execute/acquire.ts). */
export const WAIT_SWEEP_MS = 100;
/**
 * A streamed read whose client has taken nothing for this long, while another request waits for
 * a pool connection, is taken back: its statement stopped, its response cut, its connection
 * handed on (execute/acquire.ts). "Taken" is what the kernel saw the client acknowledge
 * (execute/client-progress.ts), which moves each time its application reads; a client whose own
 * reads came further apart before is given twice its longest gap. Long enough for a client that
 * reads 16 KiB every 100 ms, whose count moves in steps of a TCP window (docs/operations.md);
 * short enough that a read waiting behind silent ones is served within the contract's 3 s.
 * Alone (nobody waiting) such a read is cut only by `--stall-timeout` and `--min-read-rate`.
 */
export const SLOW_READER_MS = 600;
/**
 * When a pool connection comes back, the lightest first wait (the fewest rows estimated) among
 * this many of the addresses that hold the fewest connections is served (execute/acquire.ts):
 * enough for a one-row read to pass the streamed reads of addresses queued before it, few enough
 * that a long line costs nothing per connection.
 */
export const LINE_LOOKAHEAD = 16;
/**
 * The pool is shared fairly between client addresses (execute/acquire.ts), each with a small
 * record: those of addresses with nothing in progress are dropped together once there are this
 * many records (never one per request).
 */
export const IDLE_CLIENTS_KEPT = 1024;
/**
 * `-h db1,db2,…` with no host answering: the least time between two searches for one that does
 * (each search connects to every host; failing requests must not turn into a connect storm).
 */
export const HOST_SEARCH_INTERVAL_MS = 1000;
/**
 * Prepared statements are kept per connection, and the server's total (max_prepared_stmt_count,
 * 16,382 by default) is shared by every client: past it every PREPARE fails. A gateway's
 * connections keep at most PREPARED_STATEMENT_BUDGET ÷ pool size each (a quarter of the server's
 * default, whatever `--pool-size`; pool 64 × 256 would have needed 16,384), between the bounds
 * below; mysql2 closes a connection's least recently used statement past its share.
 */
export const PREPARED_STATEMENT_BUDGET = 4096;
export const MAX_PREPARED_STATEMENTS = 256;
export const MIN_PREPARED_STATEMENTS = 4;

// The API description (http/description-cache.ts).
/**
 * Event-loop time a description build (or the schema re-read's making of tables, slices.ts) may
 * take before it lets other requests run: a build for a thousand tables takes a few hundred
 * milliseconds in all, in slices of at most this.
 */
export const DESCRIPTION_SLICE_MS = 2;
/** Brotli quality of the stored description: about gzip's time for a third of its size. */
export const DESCRIPTION_BROTLI_QUALITY = 5;

// Identity: provider keys, revocation of own tokens, signed file links (docs/auth.md).
/** A JWKS is fetched again for an unknown `kid` at most this often (failed fetches count). */
export const JWKS_REFETCH_COOLDOWN_MS = 30_000;
/** A JWKS older than this is fetched again before use (when the cooldown allows). */
export const JWKS_MAX_AGE_MS = 600_000;
/** The longest a JWKS fetch may take. */
export const JWKS_FETCH_TIMEOUT_MS = 5000;
/** Seconds a provider's `exp` and `nbf` may be off (PostgREST allows the same 30 s). */
export const PROVIDER_CLOCK_TOLERANCE_SECONDS = 30;
/**
 * Own tokens stop working within USER_STATE_STALE_MS of their user's removal, role change or
 * new password (auth/user-states.ts): the states of the users seen lately are read again every
 * USER_STATE_REFRESH_MS, USER_STATE_BATCH ids a statement, and an entry older than
 * USER_STATE_STALE_MS is read again before it is trusted. Users not seen for USER_STATE_IDLE_MS
 * are forgotten.
 */
export const USER_STATE_REFRESH_MS = 3000;
export const USER_STATE_STALE_MS = 8000;
export const USER_STATE_BATCH = 500;
export const USER_STATE_IDLE_MS = 120_000;

// The change feed (docs/changes.md).
/** A comment this often keeps proxies from closing an idle event stream. */
export const FEED_HEARTBEAT_MS = 15_000;
/** What `retry:` tells an EventSource to wait before it reconnects. */
export const FEED_RETRY_MS = 2000;
/** How often a stream checks that its token is still good (expiry, a user removed). */
export const FEED_EXPIRY_CHECK_MS = 2000;
/**
 * Transactions kept in memory after they were read, so a subscriber resuming shortly after is
 * served from them; an older position is read again from the binary log.
 */
export const FEED_RECENT_TRANSACTIONS = 2000;
/** Row changes the kept transactions may hold together (older ones go first). */
export const FEED_RECENT_ROWS = 50_000;
/** Transactions read and not yet decided past which every subscriber is closed (overflow). */
export const FEED_MAX_PENDING_TRANSACTIONS = 20_000;
/** Row images evaluated in one statement at most (the temporary table's batch). */
export const FEED_BATCH_ROWS = 2000;
/**
 * The pause before the change feed's binary-log reader tries again after its connection broke
 * (the host in use, then the next ones of `-h`), and between rounds of tries.
 */
export const FEED_RECONNECT_MS = 1000;
/**
 * The change feed's binary-log connection asks the server for a heartbeat event this often
 * while the log is idle (`@master_heartbeat_period`), and is taken as dead — a network gone
 * silently leaves a half-open connection that no error ever ends — when nothing at all came
 * on it for FEED_SILENT_BEATS periods in a row: then it is closed and opened again, and the
 * answer cache serves nothing meanwhile (docs/changes.md, "A connection gone silent").
 */
export const FEED_BINLOG_HEARTBEAT_MS = 1000;
export const FEED_SILENT_BEATS = 3;
/**
 * A decision of the change feed that fails (its statement refused, its connection killed) is
 * tried again this many times, the first after FEED_DECISION_RETRY_MS and each next after
 * twice as long; then the streams it concerned end with `event: error`, to resume from.
 */
export const FEED_DECISION_RETRIES = 4;
export const FEED_DECISION_RETRY_MS = 250;
/** Bytes a change-feed subscriber may leave untaken before it is closed (overflow). */
export const FEED_MAX_LAG_BYTES = 16 * 1024 * 1024;

// Webhooks (docs/webhooks.md).
/** The first retry of a failed delivery comes after about this long; each next waits twice as long. */
export const WEBHOOK_FIRST_RETRY_MS = 1000;
/** The longest wait between two attempts (the backoff stops doubling here). */
export const WEBHOOK_MAX_RETRY_MS = 60 * 60 * 1000;
/** One attempt's bound: a receiver that has not answered by then failed this attempt. */
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 10_000;
/**
 * How much of a receiver's answer is read (only to keep the connection for the next event; the
 * body is not used): past it the connection is closed and the status is the answer.
 */
export const WEBHOOK_ANSWER_BYTES = 64 * 1024;
/**
 * While events keep coming, how often a webhook stores where it is (not once per event: one
 * statement per delivery would double MySQL's work); a crash sends again what was delivered since.
 */
export const WEBHOOK_STORE_EVERY_MS = 200;
/** Events a webhook holds in memory; past them it reads the rest back from the binary log. */
export const WEBHOOK_QUEUE_EVENTS = 10_000;
/** How long a gateway's lease on a webhook lasts without renewal (another takes over then). */
export const WEBHOOK_LEASE_MS = 20_000;
/** How often a gateway renews its leases and tries to take those whose holder stopped. */
export const WEBHOOK_LEASE_RENEW_MS = 5000;
/**
 * A gateway whose lease is no longer sure to outlast an attempt (its renewals fail) waits this
 * long between looks at it, sending nothing meanwhile.
 */
export const WEBHOOK_LEASE_WAIT_MS = 500;

// OData `$batch` (docs/odata-batch.md): what one batch may hold (past them: 4xx BATCH_*).
/** A batch body's bytes: --body-limit's default, the batch being many bodies in one. */
export const BATCH_MAX_BYTES = 4 * 1024 * 1024;
/** Requests in one batch, change sets' requests included. */
export const BATCH_MAX_REQUESTS = 100;
/** The header lines of one part or inner request, and their bytes. */
export const BATCH_MAX_HEADER_LINES = 100;
export const BATCH_MAX_HEADER_BYTES = 16 * 1024;

// Basic authentication on /odata/ (docs/odata-batch.md, "Basic authentication").
/** How long a verified email and password is remembered (argon2 is not run again meanwhile). */
export const BASIC_CREDENTIAL_TTL_MS = 60_000;
/** Credentials remembered at once (the oldest are dropped past it). */
export const BASIC_CREDENTIALS = 1000;
