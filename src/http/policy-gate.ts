/**
 * The policy gate (CONTRACT §6): an `onRequest` hook after the auth guard that works out the
 * caller's role (the token's `role`; `anonymous` without a token and in open mode), answers what
 * the role may not do before any body is read — 404 for a table it cannot read, as if absent;
 * 403 FORBIDDEN for another action or for files — and leaves `request.access` for the policy
 * stage the handlers call between plan and compile. Without a policy it adds nothing.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden, unknownTable } from '../errors.js';
import { type Action, ANONYMOUS, type FileAction, type Policy } from '../policy/policy.js';
import type { Access } from '../policy/stage.js';
import type { Services } from '../services.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller under the policy; null when there is none. */
    access: Access | null;
  }
}

/** What a request asks to do, by the route Fastify chose (never the raw URL). */
export type Requested =
  | { readonly kind: 'table'; readonly table: string; readonly action: Action }
  | { readonly kind: 'files'; readonly action: FileAction }
  | { readonly kind: 'description' }
  | { readonly kind: 'other' };

const TABLE_ACTION_BY_METHOD: Readonly<Record<string, Action>> = {
  POST: 'create',
  PUT: 'update',
  DELETE: 'delete',
};

/** Both the OpenAPI document and swagger-ui's copies of it. */
const DESCRIPTION_ROUTES = new Set(['/openapi.json', '/docs/json', '/docs/yaml']);

export function requestedAction(
  method: string,
  route: string | undefined,
  params: unknown,
): Requested {
  const get = method === 'GET' || method === 'HEAD';
  const table = (params as { table?: unknown } | undefined)?.table;
  if (route === '/table/:table/read' && get && typeof table === 'string') {
    return { kind: 'table', table, action: 'read' };
  }
  const action = TABLE_ACTION_BY_METHOD[method];
  if (route === '/table/:table/:action' && action !== undefined && typeof table === 'string') {
    return { kind: 'table', table, action };
  }
  if (route === '/upload' && method === 'POST') return { kind: 'files', action: 'upload' };
  if (route === '/@/*' && get) return { kind: 'files', action: 'download' };
  if (route !== undefined && DESCRIPTION_ROUTES.has(route) && get) return { kind: 'description' };
  return { kind: 'other' };
}

/** Whether the role may do what was requested (a table action needs the table readable too). */
export function mayDo(policy: Policy, role: string, requested: Requested): boolean {
  switch (requested.kind) {
    case 'table':
      return (
        policy.grant(role, requested.table, 'read') !== null &&
        policy.grant(role, requested.table, requested.action) !== null
      );
    case 'files':
      return policy.mayFiles(role, requested.action);
    case 'description':
      return policy.grantsAnything(role);
    case 'other':
      return false;
  }
}

/** Whether a request without a token may go on as `anonymous` (auth guard, auth mode). */
export function anonymousMay(policy: Policy | undefined, request: FastifyRequest): boolean {
  if (policy === undefined) return false;
  const requested = requestedAction(request.method, request.routeOptions.url, request.params);
  return mayDo(policy, ANONYMOUS, requested);
}

function accessOf(policy: Policy, request: FastifyRequest): Access {
  const claims = request.auth;
  if (claims === null) return { policy, role: ANONYMOUS, user: null };
  return {
    policy,
    role: claims.role,
    user: { id: claims.sub, email: claims.email, role: claims.role },
  };
}

export function registerPolicyGate(app: FastifyInstance, { policy }: Services): void {
  app.decorateRequest('access', null);
  if (policy === undefined) return;
  // A callback hook, not an async one: it runs on every request (issue 17).
  app.addHook('onRequest', (request, _reply, done) => {
    const access = accessOf(policy, request);
    request.access = access;
    const requested = requestedAction(request.method, request.routeOptions.url, request.params);
    if (requested.kind === 'table') {
      if (policy.grant(access.role, requested.table, 'read') === null) {
        return done(unknownTable(requested.table));
      }
      if (policy.grant(access.role, requested.table, requested.action) === null) {
        return done(forbidden());
      }
    } else if (
      requested.kind === 'files' &&
      // A signed link was made only for an uploader whose role may download (http/upload.ts).
      !request.fileLink &&
      !policy.mayFiles(access.role, requested.action)
    ) {
      return done(forbidden());
    }
    done();
  });
}
