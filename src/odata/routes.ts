/**
 * `/odata/…`: the OData v4 service (docs/odata.md), a front door beside REST and MCP. Every
 * request goes to odata/route.ts (request → Operation → handle → OData's shapes); this module
 * declares the route's gate (each request is decided as its REST request is, in handle), puts
 * `OData-Version: 4.0` on every answer of the scope, and frames every error of the scope —
 * the guard's 401, the policy gate's 403, a 404, a 400 of the query — in OData's error form
 * `{"error": {"code", "message"}}`, with the catalogue's code and the same status.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify';
import type { ApiError } from '../errors.js';
import { sendError } from '../http/errors.js';
import { JSON_TYPE } from '../http/json-rows.js';
import type { Loopback } from '../http/loopback.js';
import { gated } from '../http/route-gate.js';
import { setSecurityHeaders } from '../http/security-headers.js';
import { ignoreEmptyBody } from '../http/write.js';
import type { Handler } from '../pipeline/handle.js';
import type { Services } from '../services.js';
import { odataError } from './batch.js';
import { ODATA_PREFIX, ODataService } from './route.js';

const ERROR_START = '{"success":false,';

/** The error body tablegate's handlers wrote, as OData's error (same code and message). */
function odataErrorOfPayload(payload: string): string {
  const { code, message } = JSON.parse(payload) as { code: string; message: string };
  return JSON.stringify({ error: { code, message } });
}

/** Whether a URL is the OData service's. */
const isODataUrl = (url: string): boolean =>
  url === ODATA_PREFIX || url.startsWith(`${ODATA_PREFIX}/`) || url.startsWith(`${ODATA_PREFIX}?`);

/**
 * sendError for what is refused before any route's hooks run (a malformed percent-encoding, a
 * method no route takes): under `/odata/` in OData's error form with `OData-Version`, as the
 * scope's own hook frames every other error; elsewhere as it is.
 */
export function sendErrorInItsForm(reply: FastifyReply, error: ApiError): FastifyReply {
  if (!isODataUrl(reply.request.url)) return sendError(reply, error);
  setSecurityHeaders(reply, reply.request.url);
  return reply
    .code(error.status)
    .headers(error.headers)
    .header('OData-Version', '4.0')
    .type(JSON_TYPE)
    .send(odataError(error));
}

export function odataRoutes(
  app: FastifyInstance,
  services: Services,
  handler: Handler,
  loopback: Loopback,
): ODataService {
  const service = new ODataService(services, handler, loopback);
  app.register(async (scope) => {
    scope.addHook('onSend', (_request, reply, payload, done) => {
      reply.header('OData-Version', '4.0');
      if (
        reply.statusCode >= 400 &&
        typeof payload === 'string' &&
        payload.startsWith(ERROR_START)
      ) {
        return done(null, odataErrorOfPayload(payload));
      }
      done(null, payload);
    });
    const route = {
      method: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'],
      // A DELETE's empty body with `Content-Type: application/json` (o.js and @odata/client
      // send their JSON type on every request) is no body, as on REST's DELETE.
      onRequest: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) =>
        request.method === 'DELETE' ? ignoreEmptyBody(request, reply, done) : done(),
      ...gated({ kind: 'odata' }),
      handler: service.answer.bind(service),
    } as const;
    scope.route({ ...route, method: [...route.method], url: ODATA_PREFIX });
    scope.route({ ...route, method: [...route.method], url: `${ODATA_PREFIX}/*` });
  });
  return service;
}
