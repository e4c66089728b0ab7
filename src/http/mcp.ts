/**
 * `POST /mcp`: the Model Context Protocol over Streamable HTTP (docs/mcp.md), stateless with JSON
 * answers: the request goes to the MCP server of this request (mcp/server.ts) — one JSON-RPC
 * request straight through (mcp/single-call.ts), anything else as a Web request through the
 * SDK's transport, whose Web response comes back as the reply. Behind the auth guard and the
 * policy gate like every route: the same token, the same role and policy as REST. GET (a
 * server-sent event stream) and DELETE (a session's end) have nothing to serve without
 * sessions: 405.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { answerCall, answerMcp } from '../mcp/server.js';
import { singleCall } from '../mcp/single-call.js';
import type { Handler } from '../pipeline/handle.js';
import type { Services } from '../services.js';
import { gated } from './route-gate.js';

/** The request headers the transport reads. */
const FORWARDED = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id'];

/** A body the transport reads itself and answers for: not JSON, or of another type. */
class RawBody {
  constructor(readonly text: string) {}
}

/**
 * `/mcp`'s parsers. JSON: Fastify's own (so a body that parses is what every route gets, with its
 * guard against `__proto__` keys), except that a body that is empty or not JSON at all is kept as
 * text for the SDK's transport, whose JSON-RPC parse error (-32700, after its Accept and
 * Content-Type checks) is what an MCP client expects rather than the REST INVALID_JSON
 * (docs/mcp.md).
 */
function registerParsers(scope: FastifyInstance): void {
  // Another Content-Type: the transport's own 415 (-32000), as for text/plain.
  scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) =>
    done(null, new RawBody(body as string)),
  );
  const parse = scope.getDefaultJsonParser('error', 'error');
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string; // parseAs: 'string'
    parse(request, text, (error, value) => {
      if (error === null || error === undefined) return done(null, value);
      if (!parsesAsJson(text)) return done(null, new RawBody(text));
      done(error, undefined);
    });
  });
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export function mcpRoutes(app: FastifyInstance, services: Services, handler: Handler): void {
  app.register(async (scope) => {
    registerParsers(scope);
    mcpRoute(scope, services, handler);
  });
}

function mcpRoute(app: FastifyInstance, services: Services, handler: Handler): void {
  app.post('/mcp', gated({ kind: 'mcp' }), async (request: FastifyRequest, reply: FastifyReply) => {
    const context = {
      services,
      handler,
      request,
      maxRows: services.config.mcpMaxRows,
      log: services.log,
    };
    const { body } = request;
    const call = body instanceof RawBody ? undefined : singleCall(request.headers, body);
    if (call !== undefined) {
      const answer = await answerCall(context, call);
      return reply.header('content-type', 'application/json').send(JSON.stringify(answer));
    }
    const headers = new Headers();
    for (const name of FORWARDED) {
      const value = request.headers[name];
      if (typeof value === 'string') headers.set(name, value);
    }
    // The transport reads only the method, these headers and the parsed body (or, for one that
    // is not JSON, the text: it answers its own parse error).
    const web = new Request('http://tablegate.invalid/mcp', {
      method: 'POST',
      headers,
      body: body instanceof RawBody ? body.text : undefined,
    });
    const response = await answerMcp(context, web, body instanceof RawBody ? undefined : body);
    reply.code(response.status);
    response.headers.forEach((value, name) => {
      reply.header(name, value);
    });
    return reply.send(await response.text());
  });
}
