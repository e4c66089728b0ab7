/**
 * The metrics listener: a plain HTTP server of its own on --metrics-host:--metrics-port that
 * answers `GET /metrics` in Prometheus' text format and 404 to anything else. Separate from the
 * API's port so that in auth mode it is never public by accident and a scrape needs no token.
 */
import http from 'node:http';
import type { Registry } from 'prom-client';

export interface MetricsListener {
  /** `http://<host>:<port>/metrics` */
  readonly url: string;
  close(): Promise<void>;
}

function answer(registry: Registry, request: http.IncomingMessage, response: http.ServerResponse) {
  const path = (request.url ?? '').split('?')[0];
  if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
    response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    response.end('Not found: metrics are at GET /metrics\n');
    return;
  }
  registry.metrics().then(
    (body) => {
      response.writeHead(200, { 'content-type': registry.contentType });
      response.end(request.method === 'HEAD' ? undefined : body);
    },
    (error: unknown) => {
      response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(`cannot collect metrics: ${String(error)}\n`);
    },
  );
}

export async function listenMetrics(
  registry: Registry,
  host: string,
  port: number,
): Promise<MetricsListener> {
  const server = http.createServer((request, response) => answer(registry, request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        // Prometheus keeps its connection open between scrapes: do not wait for it.
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
