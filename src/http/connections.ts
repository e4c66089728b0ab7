/**
 * The HTTP server's connections and which of them carry a request now. At a stop, one that
 * carries none is closed at once: a browser keeps a spare connection open to the origin of the
 * page, and an EventSource reconnecting on it would meet a stopping server (Node's
 * closeIdleConnections leaves a connection that never sent a request open). Closed, the
 * client's next attempt opens a new one, which reaches the next gateway.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface Connections {
  /** Closes every connection that has no request in flight. */
  closeUnused(): void;
}

/**
 * Whether a request is in flight on the connection. Node's HTTP server attaches the response
 * it answers to its socket from the request's headers until that response is flushed whole
 * (pipelined ones wait behind it; closeIdleConnections reads the same field). Asked at the stop
 * alone, so a request costs nothing here: a listener on every request cost some 1 % of a
 * one-row read's CPU (bench/README.md).
 */
function carriesRequest(socket: Socket): boolean {
  const response = (socket as Socket & { _httpMessage?: unknown })._httpMessage;
  return response !== null && response !== undefined;
}

export function trackConnections(server: Server): Connections {
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  return {
    closeUnused: () => {
      for (const socket of open) if (!carriesRequest(socket)) socket.destroy();
    },
  };
}
