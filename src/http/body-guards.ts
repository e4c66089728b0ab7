/**
 * Bounds on JSON request bodies beyond their size (Fastify's bodyLimit): how long they may take
 * to arrive and how deep they nest. A body trickled a byte every 15 s held its connection for
 * minutes, and 1,100 of them exhausted the file descriptors. A 10 KB body can
 * nest arrays 5,000 deep, and code that walks values recursively (JSON.stringify of a JSON
 * column's value) overflowed the stack: 500 instead of 400. Uploads stream and are
 * exempt from the time bound (a 1 GiB file may take minutes).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify';
import { bodyTooDeep, requestTimeout } from '../errors.js';
import { MAX_BODY_DEPTH } from '../limits.js';

export const STREAMING_ROUTES: ReadonlySet<string> = new Set(['/upload']);

/** True when `value` nests arrays/objects deeper than `limit`; iterative, so any depth is safe. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (limit >= 1 && isFlat(value)) return false; // nearly every body: no stack to build
  const stack: [unknown, number][] = [[value, 1]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [current, depth] = item;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** A scalar, or an object or array holding none (depth 1 at most). */
function isFlat(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  for (const key in value) {
    const child = (value as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null) return false;
  }
  return true;
}

/**
 * Whether a request carries a body at all. Node's parser (llhttp) reads one only after a
 * Transfer-Encoding or a non-zero Content-Length; without them the request is complete as soon
 * as its headers are (but `complete` is set only after the hooks of onRequest ran).
 */
export function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function registerBodyGuards(app: FastifyInstance, bodyTimeoutMs: number): void {
  // From the end of the headers, the body has bodyTimeoutMs to arrive in full: read by the JSON
  // parser, or (a request answered before it, with 401, 404, 429 …) discarded by Node so the
  // connection can be reused. Armed in onRequest, so a request refused there is bound too.
  // Callback hooks, not async ones: they run on every request. A request without a
  // body gets no timer: there is nothing to wait for, and a timer and two listeners on every
  // GET are a measurable share of its CPU (bench/README.md, "Measurements behind the code").
  app.addHook('onRequest', (request, reply, done) => {
    if (
      request.raw.complete ||
      !hasBody(request.headers) ||
      STREAMING_ROUTES.has(request.routeOptions.url ?? '')
    ) {
      done();
      return;
    }
    // Armed after the parser has read the rest of the packet that carried the headers: a small
    // body that came with them is complete by then and needs no timer. Not on the
    // next tick: Node's parser calls back for the headers as a callback of its own, so ticks run
    // before it reads on to the body; setImmediate runs once the whole read has been parsed
    // (test/unit/http/body-guards.test.ts pins both). The bound starts a moment later than the
    // headers, nothing a client can tell.
    setImmediate(() => {
      if (request.raw.complete || request.raw.destroyed) return;
      const timer = setTimeout(() => {
        if (request.raw.complete) return;
        if (!reply.sent && request.raw.listenerCount('error') > 0) {
          // Fastify's body reader answers this error (408); then the connection is closed.
          reply.header('Connection', 'close');
          request.raw.emit('error', requestTimeout());
        } else {
          // Nothing reads this body (or the answer is out): the connection goes now.
          request.raw.socket.destroy();
        }
      }, bodyTimeoutMs);
      const stop = () => clearTimeout(timer);
      request.raw.once('end', stop);
      request.raw.once('close', stop);
    });
    done();
  });

  // Only on routes that can parse a body: Fastify reads none for GET and HEAD, so their requests
  // skip the hook runner altogether (hot path). The 404 handler takes it too (errors.ts).
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((method) => method === 'GET' || method === 'HEAD')) return;
    const own = route.preValidation;
    route.preValidation = own === undefined ? [checkBodyDepth] : [checkBodyDepth, own].flat();
  });
}

/** A preValidation hook: a parsed body nesting deeper than MAX_BODY_DEPTH is a 400. */
export function checkBodyDepth(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  if (nestsDeeperThan(request.body, MAX_BODY_DEPTH)) done(bodyTooDeep(MAX_BODY_DEPTH));
  else done();
}
