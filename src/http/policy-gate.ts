/**
 * The policy gate (docs/policies.md): an `onRequest` hook after the auth guard that reads what
 * the route declares it is (its gate, http/route-gate.ts), works out the caller's role (the token's `role`; `anonymous` without a token and in open mode), answers
 * what the role may not do before any body is read — 404 for a table it cannot read or a routine
 * it may not call, as for one that does not exist; 403 FORBIDDEN for another action on a table
 * that exists, or for files — and leaves `request.access` for the pipelines. The table and
 * routine decisions are pipeline/decide.ts's, the same for every front door; Policy.decide says
 * what is allowed. Without a policy it adds nothing.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden } from '../errors.js';
import { may, routinesFor, tableFor } from '../pipeline/decide.js';
import { ANONYMOUS, type Policy, type Requested } from '../policy/policy.js';
import type { Access } from '../policy/views.js';
import type { Services } from '../services.js';
import { requestedOf } from './route-gate.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller under the policy; null when there is none. */
    access: Access | null;
  }
}

export type { Requested } from '../policy/policy.js';

/** What the request asks, by the gate its route declares (http/route-gate.ts). */
function askedBy(request: FastifyRequest): Requested {
  return requestedOf(request.routeOptions.config.gate, request.params);
}

/** Whether the role may do what was requested (Policy.decide says, with why not). */
export function mayDo(policy: Policy, role: string, requested: Requested): boolean {
  return policy.decide(role, requested).allowed;
}

/** Whether a request without a token may go on as `anonymous` (auth guard, auth mode). */
export function anonymousMay(policy: Policy | undefined, request: FastifyRequest): boolean {
  if (policy === undefined) return false;
  return mayDo(policy, ANONYMOUS, askedBy(request));
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
    const asked = askedBy(request);
    // Only tables, files, routines and the MCP endpoint are refused here; other routes answer for
    // themselves.
    if (asked.kind === 'description' || asked.kind === 'other') return done();
    if (asked.kind === 'table') {
      // A table the role may not read and one that does not exist answer alike, here, before
      // the body is read (else a body error would tell them apart); only a table that exists is
      // 403 for another action (pipeline/decide.ts).
      let found: ReturnType<typeof tableFor>;
      try {
        found = tableFor(schema, access, asked.table, asked.action);
      } catch (refusal) {
        return done(refusal as Error);
      }
      // The fast path of every table request: a known table passes at once, without a promise.
      if (!(found instanceof Promise)) return done();
      found.then(() => done(), done);
      return;
    }
    const allowed = may(access, asked);
    if (asked.kind === 'routine') {
      // Withheld: the 404 of a routine that does not exist, after the same wait (db/schema.ts).
      if (allowed) return done();
      routinesFor(schema, access, asked.routine).catch(done);
      return;
    }
    // A role granted nothing has no tool to use; one granted anything is offered the tools it can
    // use, and each call is decided as its REST request is (pipeline/decide.ts).
    if (asked.kind === 'mcp' || asked.kind === 'odata')
      return done(allowed ? undefined : forbidden());
    // A signed link was made only for an uploader whose role may download (http/upload.ts).
    return done(allowed || request.fileLink ? undefined : forbidden());
  });
}
