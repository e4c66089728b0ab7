/**
 * One gateway's Prometheus metrics (prom-client, a registry of its own): requests and their
 * latency by route pattern, the MySQL pool (and the streamed reads it took back), MySQL errors
 * by code, login throttle hits, upload bytes, and prom-client's process metrics. Made and
 * hooked in only with --metrics-port: without it no hook runs, so the hot path pays nothing.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { errorName } from '../db/errors.js';
import type { SchemaCache } from '../db/schema.js';
import { ApiError, MYSQL_ERRORS } from '../errors.js';
import type { Database } from '../execute/database.js';
import { ANONYMOUS, type Policy } from '../policy/policy.js';
import { toApiError } from '../to-api-error.js';
import type { WebhookCounters } from '../webhooks/delivery.js';
import { scrapedCounter, scrapedGauge } from './scraped.js';

/** Seconds; finer than prom-client's default at the low end, where most requests are. */
const LATENCY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];
/** The route label of a request no route matched (a 404): never its raw URL. */
export const UNMATCHED_ROUTE = 'unmatched';
/** Catalogue codes that say MySQL failed or refused (besides MYSQL_ERRORS' own names). */
const DATABASE_CODES: ReadonlySet<string> = new Set([
  'DATABASE_UNAVAILABLE',
  'DATABASE_BUSY',
  'QUERY_TIMEOUT',
  'WRITE_OUTCOME_UNKNOWN',
  ...Object.keys(MYSQL_ERRORS),
]);
const THROTTLED_ROUTES: ReadonlySet<string> = new Set(['/auth/login', '/auth/register']);

/**
 * The MySQL error code an error counts under, or undefined when MySQL had no part in it: the
 * catalogue code it is answered with (ER_DUP_ENTRY, QUERY_TIMEOUT, DATABASE_UNAVAILABLE…), or
 * for a driver error the catalogue does not map (a 500) the driver's own name.
 */
export function mysqlErrorCode(error: unknown): string | undefined {
  const answer = toApiError(error);
  if (DATABASE_CODES.has(answer.code)) return answer.code;
  if (error instanceof ApiError || typeof error !== 'object' || error === null) return undefined;
  const driver = error as { errno?: number; sqlState?: string; code?: string };
  if (typeof driver.errno !== 'number' && typeof driver.sqlState !== 'string') return undefined;
  return errorName(driver) ?? `ERRNO_${String(driver.errno)}`;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status' | 'table'>;
  private readonly latency: Histogram<'method' | 'route' | 'status'>;
  private readonly mysqlErrors: Counter<'code'>;
  private readonly throttled: Counter<'route' | 'code'>;
  private readonly uploadBytes: Counter;
  private readonly uploadFiles: Counter;

  constructor(
    db: Database,
    private readonly schema: SchemaCache,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'tablegate_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern, status and (table routes) table',
      labelNames: ['method', 'route', 'status', 'table'],
      registers,
    });
    this.latency = new Histogram({
      name: 'tablegate_http_request_duration_seconds',
      help: 'Time from request to the end of the answer, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'tablegate_mysql_pool_connections',
      help: 'MySQL pool connections by state (in_use: running a statement; idle: open, free)',
      labelNames: ['state'],
      registers,
      collect() {
        const stats = db.stats();
        this.set({ state: 'in_use' }, stats.inUse);
        this.set({ state: 'idle' }, stats.idle);
      },
    });
    scrapedGauge(
      this.registry,
      'tablegate_mysql_pool_waiting',
      'Requests waiting for a MySQL pool connection',
      () => db.stats().waiting,
    );
    // A count the pool keeps (execute/acquire.ts); a pool opened anew (another host of -h)
    // starts again from 0, and the counter goes on from there.
    scrapedCounter(
      this.registry,
      'tablegate_stream_taken_back_total',
      'Streamed reads cut because their client took nothing while other requests waited for a MySQL connection',
      () => db.takenBack(),
    );
    this.mysqlErrors = new Counter({
      name: 'tablegate_mysql_errors_total',
      help: 'Requests answered with a MySQL error, by code (catalogue code or driver error name)',
      labelNames: ['code'],
      registers,
    });
    this.throttled = new Counter({
      name: 'tablegate_login_throttled_total',
      help: 'Logins and registrations refused with 429, by route and error code',
      labelNames: ['route', 'code'],
      registers,
    });
    this.uploadBytes = new Counter({
      name: 'tablegate_upload_bytes_total',
      help: 'Bytes of uploaded files stored',
      registers,
    });
    this.uploadFiles = new Counter({
      name: 'tablegate_upload_files_total',
      help: 'Uploaded files stored',
      registers,
    });
  }

  /** Under a policy, tables are named only to callers whose role may read them (tableOf). */
  private policy: Policy | undefined;

  /** Hooks the counting into the app (buildServer calls this only when metrics are on). */
  register(app: FastifyInstance, policy?: Policy): void {
    this.policy = policy;
    app.addHook('onResponse', (request, reply, done) => {
      this.countResponse(request, reply);
      done();
    });
    app.addHook('onError', (request, _reply, error, done) => {
      this.countError(request, error);
      done();
    });
  }

  /** What webhooks count (webhooks/delivery.ts), by webhook name (bounded by the file). */
  webhookCounters(): WebhookCounters {
    const registers = [this.registry];
    const delivered = new Counter({
      name: 'tablegate_webhook_deliveries_total',
      help: 'Webhook events delivered (answered 2xx), by webhook',
      labelNames: ['webhook'],
      registers,
    });
    const failed = new Counter({
      name: 'tablegate_webhook_failed_attempts_total',
      help: 'Webhook delivery attempts that failed (not 2xx, no answer), by webhook',
      labelNames: ['webhook'],
      registers,
    });
    const dead = new Counter({
      name: 'tablegate_webhook_dead_letters_total',
      help: 'Webhook events given up on after --webhook-max-age, by webhook',
      labelNames: ['webhook'],
      registers,
    });
    return {
      delivered: (webhook) => delivered.inc({ webhook }),
      failed: (webhook) => failed.inc({ webhook }),
      dead: (webhook) => dead.inc({ webhook }),
    };
  }

  /** Files an upload request stored, counted when its answer is made. */
  countUpload(sizes: readonly number[]): void {
    this.uploadFiles.inc(sizes.length);
    this.uploadBytes.inc(sizes.reduce((sum, size) => sum + size, 0));
  }

  private countResponse(request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    const method = request.method;
    const status = String(reply.statusCode);
    this.requests.inc({ method, route, status, table: this.tableOf(route, request) });
    this.latency.observe({ method, route, status }, reply.elapsedTime / 1000);
  }

  /**
   * A table route's table, only when the schema knows it: the label's values are bounded by
   * the schema, never by what clients send (an unknown name is ''). Under a policy, only when
   * the caller's role may read it (`anonymous` for a request the auth guard stopped before the
   * policy gate): a table the role may not read answers as one that does not exist, and its
   * name in the metrics must not say otherwise.
   */
  private tableOf(route: string, request: FastifyRequest): string {
    if (!route.startsWith('/table/:table/')) return '';
    const table = (request.params as { table?: unknown } | undefined)?.table;
    if (typeof table !== 'string' || !this.schema.has(table)) return '';
    const policy = this.policy;
    if (policy === undefined) return table;
    const role = request.access?.role ?? ANONYMOUS;
    return policy.grant(role, table, 'read') === null ? '' : table;
  }

  private countError(request: FastifyRequest, error: FastifyError): void {
    const mysqlCode = mysqlErrorCode(error);
    if (mysqlCode !== undefined) this.mysqlErrors.inc({ code: mysqlCode });
    const route = request.routeOptions.url;
    if (error instanceof ApiError && error.status === 429 && THROTTLED_ROUTES.has(route ?? '')) {
      this.throttled.inc({ route, code: error.code });
    }
  }
}
