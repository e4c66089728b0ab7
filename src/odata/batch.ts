/**
 * `POST /odata/$batch` (docs/odata-batch.md): several requests in one, in the JSON form (OData
 * 4.01) or multipart/mixed (4.0), parsed by batch-parse.ts. Units run in order. A change set
 * (atomicity group) is one transaction: its writes are planned and guarded exactly as alone and
 * run as one chain (Handler.writeAll), all or none; a single write is a change set of one. A
 * write's body is read as alone (body.ts writeBody); a `$<id>` URL names an earlier create of
 * its change set (batch-references.ts). Any other request — a read — is dispatched to the
 * gateway's own routes over a loopback, with the caller's Authorization and the batch's origin,
 * so it is answered exactly as if sent alone. A unit depending on one that failed is not run
 * (424). The envelope's own errors are OData errors of the batch.
 */
import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mapDbError } from '../db/errors.js';
import {
  ApiError,
  apiError,
  batchDependencyFailed,
  batchMediaType,
  batchSyntax,
  batchTooLarge,
  internalError,
  odataUnsupported,
  unsupportedMediaType,
} from '../errors.js';
import { gated } from '../http/route-gate.js';
import { BATCH_MAX_BYTES } from '../limits.js';
import { ChangeSetFailure, type Handler } from '../pipeline/handle.js';
import { toApiError } from '../to-api-error.js';
import {
  type BatchUnit,
  type InnerRequest,
  multipartBoundary,
  parseJsonBatch,
  parseMultipartBatch,
} from './batch-parse.js';
import { type Created, type Earlier, referencedWrite } from './batch-references.js';
import { type BatchWrite, batchWrite, type InnerResponse, parseODataPath } from './batch-writes.js';
import { writeBody } from './body.js';
import type { ODataModel } from './model.js';
import { parsePath } from './path.js';
import type { ODataService } from './route.js';

const SERVICE_ROOT = '/odata/';
const WRITE_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
/** Headers of a dispatched read worth passing on (not the security headers every answer has). */
const KEPT_HEADERS = [
  'content-type',
  'location',
  'etag',
  'odata-version',
  'preference-applied',
  'retry-after',
];

/** The OData error body of an ApiError. */
export function odataError(error: ApiError): string {
  return JSON.stringify({ error: { code: error.code, message: error.message } });
}

function errorResponse(thrown: unknown): InnerResponse {
  const error = thrown instanceof ApiError ? thrown : mapDbError(thrown);
  const shown =
    error.status >= 500 && error.status !== 503 && error.status !== 504 ? internalError() : error;
  return {
    status: shown.status,
    headers: { 'content-type': 'application/json', ...lower(shown.headers) },
    body: odataError(shown),
  };
}

const lower = (headers: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

interface Answered {
  readonly request: InnerRequest;
  readonly response: InnerResponse;
}

export function batchRoutes(app: FastifyInstance, handler: Handler, service: ODataService): void {
  app.register(async (scope) => {
    // The batch body is read whole as bytes here, whatever its type: JSON and multipart alike
    // are parsed by the route, which answers a wrong type with its own 415.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: BATCH_MAX_BYTES },
      (_r, body, done) => done(null, body),
    );
    scope.setErrorHandler((error: unknown, request, reply) => {
      const code = (error as { code?: unknown }).code;
      const answer =
        code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? batchTooLarge(BATCH_MAX_BYTES) : toApiError(error);
      if (answer.status === 500) request.log.error({ err: error }, 'batch failed');
      const shown = answer.status === 500 ? internalError() : answer;
      return reply
        .code(shown.status)
        .headers(shown.headers)
        .header('OData-Version', '4.0')
        .type('application/json')
        .send(odataError(shown));
    });
    scope.post('/odata/$batch', gated({ kind: 'odata' }), (request, reply) =>
      runBatch(app, handler, service, request, reply),
    );
  });
}

async function runBatch(
  app: FastifyInstance,
  handler: Handler,
  service: ODataService,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<string> {
  const type = request.headers['content-type'];
  const raw = Buffer.isBuffer(request.body) ? request.body.toString('utf8') : '';
  const boundary = multipartBoundary(type);
  const essence = type?.split(';')[0]?.trim().toLowerCase();
  let units: BatchUnit[];
  if (boundary !== null) {
    units = parseMultipartBatch(raw, boundary);
  } else if (essence === 'application/json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw apiError('INVALID_JSON');
    }
    units = parseJsonBatch(parsed);
  } else {
    throw batchMediaType();
  }
  const base = `${request.protocol}://${request.host}${SERVICE_ROOT}`;
  const answered: { unit: BatchUnit; responses: Answered[]; failed: boolean }[] = [];
  const failedIds = new Set<string>();
  for (const unit of units) {
    const requests = unit.kind === 'single' ? [unit.request] : unit.requests;
    const blocked = requests.flatMap((r) => r.dependsOn).find((id) => failedIds.has(id));
    let responses: Answered[];
    let failed: boolean;
    if (blocked !== undefined) {
      const response = errorResponse(batchDependencyFailed(blocked));
      responses = requests.map((r) => ({ request: r, response }));
      failed = true;
    } else if (
      unit.kind === 'single' &&
      (!WRITE_METHODS.has(unit.request.method) ||
        callsAction(unit.request, await service.modelOf(request)))
    ) {
      const response = await dispatched(app, service, request, unit.request);
      responses = [{ request: unit.request, response }];
      failed = response.status >= 400;
    } else {
      const model = await service.modelOf(request);
      ({ responses, failed } = await changeSet(
        handler,
        request,
        requests,
        base,
        model,
        boundary === null,
      ));
    }
    if (failed) {
      for (const r of requests) failedIds.add(r.id);
      if (unit.kind === 'change-set') failedIds.add(unit.id);
    }
    answered.push({ unit, responses, failed });
  }
  reply.header('OData-Version', '4.0');
  if (boundary !== null) {
    const outer = `batchresponse_${randomBytes(12).toString('hex')}`;
    reply.type(`multipart/mixed; boundary=${outer}`);
    return multipartText(outer, answered);
  }
  reply.type('application/json');
  return jsonText(answered.flatMap(({ responses }) => responses));
}

/**
 * The writes of a change set as one transaction. Each request is turned into its Operation
 * first (a request the batch cannot read fails the set); the first refusal is the set's one
 * answer, under that request's id.
 */
async function changeSet(
  handler: Handler,
  request: FastifyRequest,
  requests: readonly InnerRequest[],
  base: string,
  model: ODataModel,
  json: boolean,
): Promise<{ responses: Answered[]; failed: boolean }> {
  const writes: BatchWrite[] = [];
  const earlier: Earlier[] = [];
  for (const inner of requests) {
    try {
      const write = writeOf(inner, base, model, earlier, json);
      writes.push(write);
      earlier.push({ id: inner.id, created: write.created });
    } catch (error) {
      return { responses: [{ request: inner, response: errorResponse(error) }], failed: true };
    }
  }
  try {
    const answers = await handler.writeAll(
      writes.map((w) => w.operation),
      request.access,
      request,
      writes.map((w) => w.check),
    );
    return {
      responses: answers.map((answer, index) => ({
        request: requests[index] as InnerRequest,
        response: (writes[index] as BatchWrite).answer(answer),
      })),
      failed: false,
    };
  } catch (thrown) {
    if (!(thrown instanceof ChangeSetFailure)) throw thrown;
    const failedRequest = requests[thrown.index] as InnerRequest;
    return {
      responses: [{ request: failedRequest, response: errorResponse(thrown.error) }],
      failed: true,
    };
  }
}

/**
 * Whether `inner` calls an action import (`POST <action>`, a name no set has), as the request
 * alone would (ODataService.answer): outside a change set it is answered by the route, as a read
 * is; inside one it is refused, since a routine runs outside any transaction of ours.
 */
function callsAction(inner: InnerRequest, model: ODataModel): boolean {
  if (inner.method !== 'POST') return false;
  let path: ReturnType<typeof parsePath>;
  try {
    path = parsePath(relativePath(inner.url).split('?')[0] as string);
  } catch {
    return false;
  }
  return (
    path.kind === 'resource' &&
    path.rest.length === 0 &&
    (path.predicate === null || path.predicate.length === 0) &&
    !model.sets.has(path.name) &&
    model.actions.has(path.name)
  );
}

/**
 * A write request of the batch as an Operation, its body read as JSON; `earlier`: the requests
 * before it in its change set, which a `$<id>` URL names (batch-references.ts).
 */
function writeOf(
  inner: InnerRequest,
  base: string,
  model: ODataModel,
  earlier: readonly Earlier[],
  json: boolean,
): BatchWrite & { readonly created: Created | null } {
  const relative = relativePath(inner.url);
  const pathText = relative.split('?')[0] as string;
  let body: unknown;
  if (inner.method !== 'DELETE') {
    const type = inner.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
    if (typeof inner.body === 'string') {
      if (type !== 'application/json') throw unsupportedMediaType();
      try {
        body = JSON.parse(inner.body);
      } catch {
        throw apiError('INVALID_JSON');
      }
    } else {
      body = inner.body;
    }
  }
  if (pathText === '$batch') throw batchSyntax('A batch cannot hold a batch');
  if (callsAction(inner, model)) {
    throw odataUnsupported(
      `'${pathText}' is an action: it runs as a call of its own, outside any transaction of a change set; send it outside the change set`,
    );
  }
  // `$<id>` names an earlier request; `$metadata` is the service's (a 404 to write, as alone).
  if (pathText.startsWith('$') && pathText.split('/')[0] !== '$metadata') {
    return referencedWrite(inner, pathText, body, base, model, earlier, json);
  }
  const path = parseODataPath(pathText, model, inner.method, `${SERVICE_ROOT}${relative}`);
  // Read as the same request alone reads it (odata/body.ts): names decoded, annotations
  // dropped, Edm forms converted, and PUT's left-out columns set to NULL.
  const { method } = inner;
  const set = model.sets.get(path.set);
  const read = method === 'POST' || method === 'PATCH' || method === 'PUT';
  const given = read ? writeBody(set, method, body) : body;
  const { prefer, 'if-match': ifMatch } = inner.headers;
  const write = batchWrite(method, path, set, given, prefer, base, ifMatch);
  const creates = method === 'POST' && path.key === null && set !== undefined;
  const created =
    creates && typeof given === 'object' && given !== null && !Array.isArray(given)
      ? { set, body: given as Record<string, unknown> }
      : null;
  return { ...write, created };
}

/**
 * The inner URL relative to the service root: `Orders`, `/odata/Orders`, or an absolute URL of
 * this service. Another path is not this service's.
 */
function relativePath(url: string): string {
  let path = url;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(path);
  if (scheme !== null) path = path.slice(scheme[0].length);
  if (path.startsWith(SERVICE_ROOT)) return path.slice(SERVICE_ROOT.length);
  if (path.startsWith('/')) throw batchSyntax(`'${url}' is not a URL of the service /odata/`);
  return path;
}

/**
 * A read sent to the gateway's own route, with the caller's Authorization and the batch's
 * origin and caller (ODataService.loopbackHeaders).
 */
async function dispatched(
  app: FastifyInstance,
  service: ODataService,
  request: FastifyRequest,
  inner: InnerRequest,
): Promise<InnerResponse> {
  let relative: string;
  try {
    relative = relativePath(inner.url);
    if (relative.split('?')[0] === '$batch') throw batchSyntax('A batch cannot hold a batch');
  } catch (error) {
    return errorResponse(error);
  }
  const headers: Record<string, string> = { ...inner.headers };
  delete headers['content-length'];
  delete headers.host;
  const authorization = request.headers.authorization;
  if (authorization === undefined) delete headers.authorization;
  else headers.authorization = authorization;
  // Its @odata.context and next links name the batch's scheme and host, not the loopback's, and
  // its caller is the batch's (the fair pool, --max-client-requests).
  Object.assign(headers, service.loopbackHeaders(request));
  // The URL as fetch will send it: `..`, `%2e%2e` and `\` segments are resolved there, and a
  // path they take out of /odata/ (`../table/t/read`) is no URL of the service.
  const target = new URL(`${SERVICE_ROOT}${relative}`, ownOrigin(app));
  if (!target.pathname.startsWith(SERVICE_ROOT)) {
    return errorResponse(batchSyntax(`'${inner.url}' is not a URL of the service /odata/`));
  }
  // An action's body: text (multipart), or a JSON value the JSON form has parsed already.
  let body: string | undefined;
  if (typeof inner.body === 'string') body = inner.body;
  else if (inner.body !== undefined) {
    body = JSON.stringify(inner.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(target, {
    method: inner.method,
    headers,
    // A GET's (or HEAD's) body means nothing; fetch refuses to send one (the blank lines
    // @odata/client puts after a GET part were a 500).
    ...(body !== undefined && inner.method !== 'GET' && inner.method !== 'HEAD' ? { body } : {}),
    redirect: 'manual',
  });
  const kept: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) kept[name] = value;
  }
  return { status: response.status, headers: kept, body: await response.text() };
}

/**
 * Where this server listens, as seen from itself. Not `app.inject`: its light-my-request loads
 * an ESM-only module that the test runner cannot require; a loopback request is answered by the
 * same routes and hooks just the same.
 */
function ownOrigin(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string')
    throw batchSyntax('The server is not listening');
  const host =
    address.address === '0.0.0.0'
      ? '127.0.0.1'
      : address.address === '::'
        ? '[::1]'
        : address.family === 'IPv6'
          ? `[${address.address}]`
          : address.address;
  return `http://${host}:${address.port}`;
}

// ---- framing ----------------------------------------------------------------------------------

function jsonText(responses: readonly Answered[]): string {
  const parts = responses.map(({ request, response }) => {
    const isJson = (response.headers['content-type'] ?? '').includes('json');
    let body = '';
    if (response.body !== '') {
      body = `,"body":${isJson ? response.body : JSON.stringify(response.body)}`;
    }
    return `{"id":${JSON.stringify(request.id)},"status":${response.status},"headers":${JSON.stringify(response.headers)}${body}}`;
  });
  return `{"responses":[${parts.join(',')}]}`;
}

function httpPart(response: InnerResponse, contentId: string | null): string {
  const head = [
    'Content-Type: application/http',
    'Content-Transfer-Encoding: binary',
    ...(contentId === null ? [] : [`Content-ID: ${contentId}`]),
  ];
  const lines = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}`.trimEnd()];
  for (const [name, value] of Object.entries(response.headers)) lines.push(`${name}: ${value}`);
  return `${head.join('\r\n')}\r\n\r\n${lines.join('\r\n')}\r\n\r\n${response.body}`;
}

/**
 * The multipart answer, mirroring the request: a part per single request, a nested
 * multipart/mixed per change set — or, for a failed change set, the one response of its failed
 * request (OData 4.0 Part 1, "Responding to a Multipart Batch Request").
 */
function multipartText(
  boundary: string,
  answered: readonly { unit: BatchUnit; responses: Answered[]; failed: boolean }[],
): string {
  const parts: string[] = [];
  for (const { unit, responses, failed } of answered) {
    const first = responses[0] as Answered;
    if (unit.kind === 'single' || failed) {
      const id = unit.kind === 'single' ? null : first.request.id;
      parts.push(httpPart(first.response, id));
      continue;
    }
    const inner = `changesetresponse_${randomBytes(12).toString('hex')}`;
    const innerParts = responses.map(({ request, response }) => httpPart(response, request.id));
    parts.push(
      `Content-Type: multipart/mixed; boundary=${inner}\r\n\r\n${innerParts
        .map((p) => `--${inner}\r\n${p}\r\n`)
        .join('')}--${inner}--`,
    );
  }
  return `${parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('')}--${boundary}--\r\n`;
}
