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

export function trackConnections(server: Server): Connections {
  const open = new Set<Socket>();
  const busy = new Map<Socket, number>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      busy.delete(socket);
    });
  });
  server.on('request', (request, response) => {
    const socket = request.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    response.once('close', () => {
      const left = (busy.get(socket) ?? 1) - 1;
      if (left > 0) busy.set(socket, left);
      else busy.delete(socket);
    });
  });
  return {
    closeUnused: () => {
      for (const socket of open) if (!busy.has(socket)) socket.destroy();
    },
  };
}
