/**
 * The policy gate (docs/policies.md): an `onRequest` hook after the auth guard that works out
 * the caller's role (the token's `role`; `anonymous` without a token and in open mode), answers
 * what the role may not do before any body is read — 404 for a table it cannot read or a routine
 * it may not call, as for one that does not exist; 403 FORBIDDEN for another action on a table
 * that exists, or for files — and leaves `request.access` for the pipelines. Policy.decide says
 * what is allowed. Without a policy it adds nothing.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, forbidden } from '../errors.js';
import { type Action, ANONYMOUS, type Policy, type Requested } from '../policy/policy.js';
import type { Access } from '../policy/views.js';
import type { Services } from '../services.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller under the policy; null when there is none. */
    access: Access | null;
  }
}

export type { Requested } from '../policy/policy.js';

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
  // `read`, `read(<key>,<value>)` and the change feed (docs/changes.md); any other GET of a
  // table is a 404 of the route itself.
  if (
    (route === '/table/:table/read' ||
      route === '/table/:table/:action' ||
      route === '/table/:table/changes') &&
    get
  ) {
    if (typeof table === 'string') return { kind: 'table', table, action: 'read' };
  }
  const action = TABLE_ACTION_BY_METHOD[method];
  if (route === '/table/:table/:action' && action !== undefined && typeof table === 'string') {
    return { kind: 'table', table, action };
  }
  const routine = (params as { name?: unknown } | undefined)?.name;
  if (route === '/rpc/:name' && (get || method === 'POST') && typeof routine === 'string') {
    return { kind: 'routine', routine };
  }
  if (route === '/upload' && method === 'POST') return { kind: 'files', action: 'upload' };
  if (route === '/@/*' && get) return { kind: 'files', action: 'download' };
  if (route !== undefined && DESCRIPTION_ROUTES.has(route) && get) return { kind: 'description' };
  if (route === '/mcp' && method === 'POST') return { kind: 'mcp' };
  return { kind: 'other' };
}

/** Whether the role may do what was requested (Policy.decide says, with why not). */
export function mayDo(policy: Policy, role: string, requested: Requested): boolean {
  return policy.decide(role, requested).allowed;
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

export function registerPolicyGate(app: FastifyInstance, { policy, schema }: Services): void {
  app.decorateRequest('access', null);
  if (policy === undefined) return;
  // A callback hook, not an async one: it runs on every request.
  app.addHook('onRequest', (request, _reply, done) => {
    const access = accessOf(policy, request);
    request.access = access;
    const requested = requestedAction(request.method, request.routeOptions.url, request.params);
    // Only tables, files, routines and the MCP endpoint are refused here; other routes answer for
    // themselves.
    if (requested.kind === 'description' || requested.kind === 'other') return done();
    const decision = policy.decide(access.role, requested);
    // A role granted nothing has no tool to use; one granted anything is offered the tools it can
    // use, and each call is decided as its REST request is (mcp/run-tool.ts).
    if (requested.kind === 'mcp') return done(decision.allowed ? undefined : forbidden());
    if (requested.kind === 'files') {
      // A signed link was made only for an uploader whose role may download (http/upload.ts).
      return done(decision.allowed || request.fileLink ? undefined : forbidden());
    }
    if (requested.kind === 'routine') {
      // Withheld: the 404 of a routine that does not exist, after the same wait (db/schema.ts).
      if (decision.allowed) return done();
      schema.refuseRoutine(requested.routine).catch(done);
      return;
    }
    // A table the role may not read and one that does not exist answer alike, here, before the
    // body is read (else a body error would tell them apart), after the same schema re-read
    // (db/schema.ts refuse); only a table that exists is 403 for another action.
    // Its "did you mean" names only tables the role may read.
    if (!decision.allowed && decision.refusal === 'unknown-table') {
      schema.refuse(requested.table, policy.readableBy(access.role)).catch(done);
      return;
    }
    const found = schema.require(requested.table);
    const answer = decision.allowed ? undefined : forbidden();
    if (!(found instanceof Promise)) return done(answer);
    found.then(
      () => done(answer),
      // Not there after the same re-read: the same 404, its suggestions the role's.
      (error: unknown) =>
        done(
          error instanceof ApiError && error.code === 'UNKNOWN_TABLE'
            ? schema.unknown(requested.table, policy.readableBy(access.role))
            : (error as Error),
        ),
    );
  });
}
