/**
 * What each route is, declared where it is registered (`config: { gate }`, docs/policies.md):
 * the auth guard lets a `public` route through without a token, and the policy gate asks
 * Policy.decide about the table, routine, files or description the route serves. No hook keeps a
 * list of route strings, and a route that declares nothing cannot start (RouteGates.check).
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { Action, FileAction, Requested } from '../policy/policy.js';

export type RouteGate =
  /** Needs no token and no grant: login, registration, the probes, the docs page and assets. */
  | { readonly kind: 'public' }
  /** Needs a token in auth mode and no grant: the caller's own account, the index. */
  | { readonly kind: 'signed-in' }
  /** The action on the table named by the route's `:table`. */
  | { readonly kind: 'table'; readonly action: Action }
  /** Calling the routine named by the route's `:name`. */
  | { readonly kind: 'routine' }
  | { readonly kind: 'files'; readonly action: FileAction }
  /** The API description (`/openapi.json` and Swagger UI's copies of it). */
  | { readonly kind: 'description' }
  /** The MCP endpoint: each tool call is decided as its REST request is (pipeline/decide.ts). */
  | { readonly kind: 'mcp' }
  /** The OData service: each request is decided as its REST request is (pipeline/decide.ts). */
  | { readonly kind: 'odata' };

declare module 'fastify' {
  interface FastifyContextConfig {
    gate?: RouteGate;
  }
  interface FastifyInstance {
    /** Every route with the gate it declares (buildServer). */
    readonly routeGates: RouteGates;
  }
}

/** Route options that declare the gate: `app.get(url, gated({ kind: 'public' }), handler)`. */
export function gated(gate: RouteGate): { config: { gate: RouteGate } } {
  return { config: { gate } };
}

/** What a request on a route with this gate asks the policy, with the route's parameters. */
export function requestedOf(gate: RouteGate | undefined, params: unknown): Requested {
  switch (gate?.kind) {
    case 'table': {
      const table = (params as { table?: unknown }).table;
      return typeof table === 'string'
        ? { kind: 'table', table, action: gate.action }
        : { kind: 'other' };
    }
    case 'routine': {
      const routine = (params as { name?: unknown }).name;
      return typeof routine === 'string' ? { kind: 'routine', routine } : { kind: 'other' };
    }
    case 'files':
      return { kind: 'files', action: gate.action };
    case 'description':
      return { kind: 'description' };
    case 'mcp':
      return { kind: 'mcp' };
    case 'odata':
      return { kind: 'odata' };
    default:
      return { kind: 'other' };
  }
}

/** Every route's declared gate, recorded as routes are registered and checked before listening. */
export class RouteGates {
  private readonly routes: RouteOptions[] = [];

  /** Records every route registered on `app` from now on; call before any route or plugin. */
  watch(app: FastifyInstance): void {
    app.decorate<RouteGates>('routeGates', this);
    app.addHook('onRoute', (route) => {
      this.routes.push(route);
    });
    // onRoute hooks of a plugin's scope run after this one, on the same options (http/docs.ts
    // and http/files.ts declare the routes their plugins add): checked once all have run.
    app.addHook('onReady', (done) => done(this.check()));
  }

  /** Each route as `METHOD url` with its gate, in registration order. */
  list(): { route: string; gate: RouteGate | undefined }[] {
    return this.routes.flatMap((route) =>
      (Array.isArray(route.method) ? route.method : [route.method]).map((method) => ({
        route: `${method} ${route.url}`,
        gate: route.config?.gate,
      })),
    );
  }

  /** An error naming the routes that declare no gate; undefined when every route does. */
  check(): Error | undefined {
    const undeclared = this.list().filter(({ gate }) => gate === undefined);
    if (undeclared.length === 0) return undefined;
    return new Error(`routes without a gate: ${undeclared.map(({ route }) => route).join(', ')}`);
  }
}
