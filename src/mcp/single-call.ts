/**
 * A POST that holds one JSON-RPC request, answered without the SDK's Web transport. That
 * transport wants a Web Request and answers with a Web Response (undici's objects, a
 * ReadableStream and its reader, an AbortSignal): most of what an MCP call spent outside its
 * tool (bench/README.md, "Measurements behind the code"). For the request it would hand to the server alone and answer with
 * the server's reply as JSON, the gateway hands it over itself, through the SDK's Transport
 * interface; everything else (batches, notifications, initialize, whatever the transport
 * refuses) still goes to the SDK's transport, so its answers and errors stay its own.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type JSONRPCMessage,
  type JSONRPCRequest,
  JSONRPCRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * The request of a POST that the SDK's stateless JSON transport would pass on to the server
 * on its own, and answer with the server's reply: its Accept, Content-Type and protocol version
 * pass the transport's checks, and the body is one JSON-RPC request (as the transport parses
 * it) that does not initialize. Anything else is undefined: the SDK's transport answers it.
 */
export function singleCall(
  headers: IncomingHttpHeaders,
  body: unknown,
): JSONRPCRequest | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { accept } = headers;
  if (accept === undefined || !accept.includes('application/json')) return undefined;
  if (!accept.includes('text/event-stream')) return undefined;
  if (!isJsonContentType(headers['content-type'])) return undefined;
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) {
    return undefined;
  }
  // Initialize is where the transport starts a session and negotiates: it keeps that.
  if ((body as { method?: unknown }).method === 'initialize') return undefined;
  const parsed = JSONRPCRequestSchema.safeParse(body);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The transport of one request: it hands the request to the server connected to it and
 * resolves `answer` with the server's reply to it. Messages the server sends meanwhile that are
 * not that reply (notifications) go nowhere, as in the SDK's transport when it answers JSON.
 */
export class SingleCallTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly answer: Promise<JSONRPCMessage>;
  readonly #request: JSONRPCRequest;
  #resolve: (message: JSONRPCMessage) => void = () => {};

  constructor(request: JSONRPCRequest) {
    this.#request = request;
    this.answer = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if ('id' in message && !('method' in message) && message.id === this.#request.id) {
      this.#resolve(message);
    }
  }

  /** Hands the request to the server; call after `server.connect(this)`. */
  deliver(): void {
    this.onmessage?.(this.#request);
  }
}
