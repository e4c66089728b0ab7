/**
 * The description of `POST /mcp` (mcp.ts): the Model Context Protocol endpoint. Its messages are
 * JSON-RPC 2.0, described by the protocol itself; its tools are listed by `tools/list` for the
 * caller's role (docs/mcp.md).
 */
import type { Stage } from '../errors.js';
import { json, type RouteOperation } from '../openapi/operation.js';

/** A role granted nothing is refused (policy-action); every other refusal is a tool result. */
export const MCP_STAGES: readonly Stage[] = ['request', 'json-body', 'policy-action'];

export const mcpOperation: RouteOperation = {
  path: '/mcp',
  method: 'post',
  mcp: true,
  describe: (context) => ({
    tags: ['agents'],
    operationId: 'mcp',
    summary: 'Model Context Protocol (Streamable HTTP, JSON answers, no session)',
    description:
      'For AI agents: an MCP client connects to this URL. Tools: list_tables, read_rows, aggregate_rows, create_rows, update_rows, delete_rows, call_routine — the same tables, filter language, totals, routines, policy and errors as the REST routes; a role is offered only the tools it can use. The request and answer bodies are JSON-RPC 2.0 messages of the Model Context Protocol (protocol version 2025-06-18 or later); send `Accept: application/json, text/event-stream`.',
    requestBody: {
      required: true,
      content: json({ type: 'object', description: 'A JSON-RPC 2.0 request of MCP' }),
    },
    responses: {
      200: {
        description: 'The JSON-RPC 2.0 answer',
        content: json({ type: 'object', description: 'A JSON-RPC 2.0 response of MCP' }),
      },
      202: { description: 'A notification, accepted' },
      ...context.errors('mcp', MCP_STAGES),
    },
  }),
};
