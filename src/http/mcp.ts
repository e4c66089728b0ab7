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
import type { ReadPipeline } from '../pipeline/read.js';
import type { Services } from '../services.js';
import { gated } from './route-gate.js';

/** The request headers the transport reads. */
const FORWARDED = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id'];

export function mcpRoutes(app: FastifyInstance, services: Services, reads: ReadPipeline): void {
  app.post('/mcp', gated({ kind: 'mcp' }), async (request: FastifyRequest, reply: FastifyReply) => {
    const context = {
      services,
      reads,
      request,
      maxRows: services.config.mcpMaxRows,
      log: services.log,
    };
    const call = singleCall(request.headers, request.body);
    if (call !== undefined) {
      const answer = await answerCall(context, call);
      return reply.header('content-type', 'application/json').send(JSON.stringify(answer));
    }
    const headers = new Headers();
    for (const name of FORWARDED) {
      const value = request.headers[name];
      if (typeof value === 'string') headers.set(name, value);
    }
    // The transport reads only the method, these headers and the parsed body.
    const web = new Request('http://tablegate.invalid/mcp', { method: 'POST', headers });
    const response = await answerMcp(context, web, request.body);
    reply.code(response.status);
    response.headers.forEach((value, name) => {
      reply.header(name, value);
    });
    return reply.send(await response.text());
  });
}
