/**
 * Which methods a path answers, so that a request with another method on an existing path is a
 * 405 with `Allow` (RFC 9110 §15.5.6) rather than a 404 "No route": the routes' patterns as
 * they are registered (an onRoute hook), and for `/table/<t>/<action>` the method its action
 * takes (one route pattern serves every action: http/write.ts).
 */
import type { FastifyInstance } from 'fastify';
import { type ApiError, methodNotAllowed, routeNotFound } from '../errors.js';

/** The method of each table action, by the last segment's name (before any parenthesis). */
const ACTION_METHODS: Readonly<Record<string, readonly string[]>> = {
  read: ['GET', 'HEAD'],
  create: ['POST'],
  update: ['PUT'],
  delete: ['DELETE'],
};

const TABLE_ACTION = /^\/table\/[^/]+\/([^/(]+)(?:\(|$)/;

/** The methods `/table/<t>/<segment>` answers (none when the segment names no action). */
export function tableActionMethods(path: string): readonly string[] {
  const match = TABLE_ACTION.exec(path);
  return match === null ? [] : (ACTION_METHODS[match[1] as string] ?? []);
}

/**
 * The answer to `/table/<t>/<segment>` asked with a method its action does not take: 405 naming
 * the method it does, or 404 when the segment names no action.
 */
export function actionRefusal(method: string, url: string): ApiError {
  const allowed = tableActionMethods(url.split('?')[0] ?? '');
  return allowed.length > 0 ? methodNotAllowed(method, allowed) : routeNotFound(method, url);
}

/** A route pattern (`/table/:table/read`, `/docs/*`) as a regular expression over paths. */
function patternOf(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+|\*)/)
    .map((part) =>
      part === '*'
        ? '.*'
        : part.startsWith(':')
          ? '[^/]+'
          : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${source}$`);
}

export class RouteMethods {
  private readonly routes: { pattern: RegExp; methods: Set<string> }[] = [];
  private readonly byUrl = new Map<string, Set<string>>();

  /** Records every route registered on `app` from now on (call before the routes). */
  watch(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      // OPTIONS is the CORS preflight's, answered on every path (its route is `*`): no resource's.
      const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter(
        (method) => String(method).toUpperCase() !== 'OPTIONS',
      );
      if (methods.length === 0) return;
      let known = this.byUrl.get(route.url);
      if (known === undefined) {
        known = new Set();
        this.byUrl.set(route.url, known);
        this.routes.push({ pattern: patternOf(route.url), methods: known });
      }
      for (const method of methods) known.add(String(method).toUpperCase());
    });
  }

  /** The methods some route answers for `path` (without its query), sorted. */
  allowed(path: string): string[] {
    const table = tableActionMethods(path);
    if (table.length > 0) return [...table];
    if (path.startsWith('/table/')) return [];
    const methods = new Set<string>();
    for (const { pattern, methods: own } of this.routes) {
      if (pattern.test(path)) for (const method of own) methods.add(method);
    }
    return [...methods].sort();
  }

  /** The answer to `method url` that no route took: 405 when the path answers other methods. */
  refusal(method: string, url: string): ApiError {
    const allowed = this.allowed(url.split('?')[0] ?? '');
    return allowed.length > 0 && !allowed.includes(method)
      ? methodNotAllowed(method, allowed)
      : routeNotFound(method, url);
  }
}
