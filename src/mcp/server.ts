/**
 * The MCP server of one HTTP request (docs/mcp.md): the official SDK's Server over its
 * Streamable HTTP transport in stateless, JSON-answer mode — nothing is kept between requests,
 * so any gateway of a cluster answers any call, and the caller is the request's (token, role,
 * policy). It lists the tools the caller's role may use and runs them (run-tool.ts).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  type JSONRPCMessage,
  type JSONRPCRequest,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { invalidBody } from '../errors.js';
import { errorBody } from '../pipeline/answer.js';
import { VERSION } from '../version.js';
import { offered, runTool, type ToolContext } from './run-tool.js';
import { SingleCallTransport } from './single-call.js';
import { type Tool, type ToolName, tools } from './tools.js';

const INSTRUCTIONS =
  'tablegate serves the tables of one MySQL database. Call list_tables first: it names the tables you may use, their columns, relations and the actions you may take. Values and filters use the REST syntax of the gateway (OData $filter).';

/**
 * One for every request's server: each Server would otherwise build an Ajv instance of its own,
 * most of the CPU an MCP call cost (the validator keeps no state of a call).
 */
const validator = new AjvJsonSchemaValidator();

/** The tools for the gateway's row bound, built once (their descriptions are long text). */
let listed: { maxRows: number; tools: readonly Tool[] } | undefined;
function toolsFor(maxRows: number): readonly Tool[] {
  if (listed?.maxRows !== maxRows) listed = { maxRows, tools: tools(maxRows) };
  return listed.tools;
}

/**
 * Answers one MCP HTTP request through the SDK's transport: the Web request in, the Web response
 * out.
 */
export async function answerMcp(
  context: ToolContext,
  request: Request,
  body: unknown,
): Promise<Response> {
  const server = serverFor(context);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  // Not closed after: both are this request's alone and go with it. By then the call has
  // answered; close() would only abort its finished handler and build a "Connection closed"
  // error for no one — a DOMException and an McpError with their stacks, a tenth of a call's CPU.
  return transport.handleRequest(request, { parsedBody: body });
}

/** Answers the one JSON-RPC request of a POST (single-call.ts): the server's reply to it. */
export async function answerCall(
  context: ToolContext,
  request: JSONRPCRequest,
): Promise<JSONRPCMessage> {
  const transport = new SingleCallTransport(request);
  await serverFor(context).connect(transport);
  transport.deliver();
  return transport.answer;
}

/** The MCP server of one request, with the tools the caller's role may use. */
function serverFor(context: ToolContext): Server {
  const server = new Server(
    { name: 'tablegate', version: VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: validator,
    },
  );
  const names = offered(context);
  const available = toolsFor(context.maxRows).filter((tool) => names.has(tool.name));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...available] }));
  server.setRequestHandler(CallToolRequestSchema, async (call) => {
    const tool = available.find((t) => t.name === call.params.name);
    if (tool === undefined) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${call.params.name}`);
    }
    const args = call.params.arguments ?? {};
    const unknown = Object.keys(args).filter((key) => !(key in tool.inputSchema.properties));
    if (unknown.length > 0) {
      return argumentError(tool, `Unknown argument '${unknown[0]}'`);
    }
    return runTool(context, tool.name as ToolName, args);
  });
  return server;
}

/** A call's arguments that its tool does not take: a tool error, as REST's 400 would be. */
function argumentError(tool: Tool, message: string) {
  const takes = Object.keys(tool.inputSchema.properties).join(', ') || 'no arguments';
  const body = errorBody(invalidBody(`${message}; ${tool.name} takes ${takes}`));
  return { content: [{ type: 'text' as const, text: JSON.stringify(body) }], isError: true };
}
