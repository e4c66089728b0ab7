/**
 * A `$batch` body as a list of units (docs/odata-batch.md): single requests, and change sets
 * (atomicity groups) whose requests run as one transaction. Two forms: JSON (OData 4.01,
 * `{"requests":[…]}`) and multipart/mixed (OData 4.0: parts of `Content-Type: application/http`,
 * a change set a nested multipart/mixed). The multipart parser is our own: npm's multipart
 * parsers read multipart/form-data into fields and files, none reads the HTTP requests inside
 * application/http parts, and the body is already whole (Fastify's body limit) — so this is a
 * split on the boundary lines with hard limits (requests, nesting, header lines and bytes),
 * every violation a 400 BATCH_* naming it.
 */
import { batchLimit, batchSyntax } from '../errors.js';
import { BATCH_MAX_HEADER_BYTES, BATCH_MAX_HEADER_LINES, BATCH_MAX_REQUESTS } from '../limits.js';

export interface InnerRequest {
  /** The JSON form's `id`, the multipart form's `Content-ID` (or its position). */
  readonly id: string;
  readonly method: string;
  readonly url: string;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body: a JSON value already parsed (JSON form), text (multipart), or undefined. */
  readonly body: unknown;
  readonly dependsOn: readonly string[];
}

export type BatchUnit =
  | { readonly kind: 'single'; readonly request: InnerRequest }
  | {
      readonly kind: 'change-set';
      readonly id: string;
      readonly requests: readonly InnerRequest[];
    };

// ---- JSON (OData 4.01) ------------------------------------------------------------------------

/** `{"requests":[{id, method, url, headers?, body?, atomicityGroup?, dependsOn?}]}`. */
export function parseJsonBatch(body: unknown): BatchUnit[] {
  const requests = (body as { requests?: unknown } | null)?.requests;
  if (typeof body !== 'object' || body === null || !Array.isArray(requests)) {
    throw batchSyntax('A JSON batch is an object with "requests", an array of requests');
  }
  if (requests.length > BATCH_MAX_REQUESTS) {
    throw batchLimit(`A batch holds at most ${BATCH_MAX_REQUESTS} requests`);
  }
  const units: BatchUnit[] = [];
  const seen = new Set<string>();
  const closed = new Set<string>();
  let open: { id: string; requests: InnerRequest[] } | null = null;
  for (const [index, raw] of requests.entries()) {
    const request = jsonRequest(raw, index, seen);
    const group = (raw as { atomicityGroup?: unknown }).atomicityGroup;
    if (group !== undefined && typeof group !== 'string') {
      throw batchSyntax(`Request ${index + 1}: "atomicityGroup" must be a string`);
    }
    if (open !== null && open.id !== group) {
      closed.add(open.id);
      units.push({ kind: 'change-set', id: open.id, requests: open.requests });
      open = null;
    }
    if (group === undefined) {
      units.push({ kind: 'single', request });
      continue;
    }
    // A group's requests are adjacent (OData JSON Format 4.01, "Batch Request").
    if (closed.has(group)) {
      throw batchSyntax(`The requests of atomicity group '${group}' must be adjacent`);
    }
    if (seen.has(group) && open === null) {
      throw batchSyntax(`Atomicity group '${group}' has the id of a request`);
    }
    if (open === null) {
      seen.add(group);
      open = { id: group, requests: [] };
    }
    open.requests.push(request);
  }
  if (open !== null) units.push({ kind: 'change-set', id: open.id, requests: open.requests });
  return units;
}

function jsonRequest(raw: unknown, index: number, seen: Set<string>): InnerRequest {
  const at = `Request ${index + 1}`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw batchSyntax(`${at} must be an object`);
  }
  const { id, method, url, headers, body, dependsOn } = raw as Record<string, unknown>;
  if (typeof id !== 'string' || id === '') throw batchSyntax(`${at} needs an "id" string`);
  if (seen.has(id)) throw batchSyntax(`${at}: the id '${id}' is used twice`);
  if (typeof method !== 'string') throw batchSyntax(`${at} needs a "method" string`);
  if (typeof url !== 'string') throw batchSyntax(`${at} needs a "url" string`);
  const named: Record<string, string> = {};
  if (headers !== undefined) {
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
      throw batchSyntax(`${at}: "headers" must be an object of strings`);
    }
    const entries = Object.entries(headers);
    if (entries.length > BATCH_MAX_HEADER_LINES) {
      throw batchLimit(`${at} has more than ${BATCH_MAX_HEADER_LINES} headers`);
    }
    for (const [name, value] of entries) {
      if (typeof value !== 'string') throw batchSyntax(`${at}: header '${name}' must be a string`);
      named[name.toLowerCase()] = value;
    }
  }
  let depends: string[] = [];
  if (dependsOn !== undefined) {
    if (!Array.isArray(dependsOn) || dependsOn.some((d) => typeof d !== 'string')) {
      throw batchSyntax(`${at}: "dependsOn" must be an array of ids`);
    }
    depends = dependsOn as string[];
    const unknown = depends.find((d) => !seen.has(d));
    if (unknown !== undefined) {
      throw batchSyntax(`${at} depends on '${unknown}', which is no earlier request or group`);
    }
  }
  seen.add(id);
  return { id, method: method.toUpperCase(), url, headers: named, body, dependsOn: depends };
}

// ---- multipart/mixed (OData 4.0) ----------------------------------------------------------------

/** The boundary of a `multipart/mixed; boundary=…` type, or null when the type is another. */
export function multipartBoundary(type: string | undefined): string | null {
  if (type === undefined) return null;
  const [essence, ...params] = type.split(';');
  if (essence?.trim().toLowerCase() !== 'multipart/mixed') return null;
  for (const param of params) {
    const at = param.indexOf('=');
    if (at === -1 || param.slice(0, at).trim().toLowerCase() !== 'boundary') continue;
    const value = param
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    // RFC 2046 §5.1.1: 1 to 70 characters.
    return value.length >= 1 && value.length <= 70 ? value : null;
  }
  return null;
}

interface Part {
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** A multipart/mixed batch body: each part a request, or a change set of requests. */
export function parseMultipartBatch(text: string, boundary: string): BatchUnit[] {
  const units: BatchUnit[] = [];
  let count = 0;
  const counted = () => {
    count += 1;
    if (count > BATCH_MAX_REQUESTS) {
      throw batchLimit(`A batch holds at most ${BATCH_MAX_REQUESTS} requests`);
    }
  };
  for (const [index, part] of partsOf(text, boundary).entries()) {
    const inner = multipartBoundary(part.headers['content-type']);
    if (inner === null) {
      counted();
      units.push({ kind: 'single', request: httpRequest(part, `${index + 1}`) });
      continue;
    }
    const requests: InnerRequest[] = [];
    for (const [at, changePart] of partsOf(part.body, inner).entries()) {
      if (multipartBoundary(changePart.headers['content-type']) !== null) {
        throw batchLimit('A change set cannot hold another change set');
      }
      counted();
      requests.push(httpRequest(changePart, `${index + 1}.${at + 1}`));
    }
    units.push({ kind: 'change-set', id: `changeset-${index + 1}`, requests });
  }
  return units;
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The parts between the first delimiter line and the close delimiter (RFC 2046 §5.1.1). */
function partsOf(text: string, boundary: string): Part[] {
  const delimiter = new RegExp(
    `(?:^|\\r?\\n)--${escapeRegex(boundary)}(--)?[ \\t]*(?=\\r?\\n|$)`,
    'g',
  );
  const parts: Part[] = [];
  let start: number | null = null;
  let closed = false;
  for (const match of text.matchAll(delimiter)) {
    if (start !== null) parts.push(partOf(text.slice(start, match.index)));
    if (match[1] === '--') {
      closed = true;
      break;
    }
    // The part begins after the delimiter line's own line break.
    const end = (match.index as number) + match[0].length;
    start = text.startsWith('\r\n', end) ? end + 2 : text.startsWith('\n', end) ? end + 1 : end;
  }
  if (!closed) throw batchSyntax(`The multipart body has no closing --${boundary}--`);
  return parts;
}

/** A part's headers, a blank line, its body. */
function partOf(text: string): Part {
  const { headers, rest } = headersOf(text, 'A part');
  return { headers, body: rest };
}

/** Header lines up to the first blank line, and what follows it. */
function headersOf(text: string, what: string): { headers: Record<string, string>; rest: string } {
  // No headers: the blank line comes first.
  const none = /^\r?\n/.exec(text);
  if (none !== null) return { headers: {}, rest: text.slice(none[0].length) };
  const blank = /\r?\n\r?\n/.exec(text);
  // A part with headers only (a GET without a body may end right after them).
  const head = blank === null ? text : text.slice(0, blank.index);
  const rest = blank === null ? '' : text.slice(blank.index + blank[0].length);
  if (head.length > BATCH_MAX_HEADER_BYTES) {
    throw batchLimit(`${what}'s headers are longer than ${BATCH_MAX_HEADER_BYTES} bytes`);
  }
  const lines = head === '' ? [] : head.split(/\r?\n/);
  if (lines.length > BATCH_MAX_HEADER_LINES) {
    throw batchLimit(`${what} has more than ${BATCH_MAX_HEADER_LINES} header lines`);
  }
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    if (at <= 0) throw batchSyntax(`${what} has a header line that is not 'Name: value'`);
    headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  return { headers, rest };
}

/** An application/http part: `METHOD url HTTP/1.1`, headers, a blank line, the body. */
function httpRequest(part: Part, position: string): InnerRequest {
  const type = part.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/http') {
    throw batchSyntax(`Part ${position} must be of Content-Type application/http`);
  }
  const text = part.body.replace(/^(\r?\n)+/, '');
  const lineEnd = /\r?\n/.exec(text);
  const requestLine = lineEnd === null ? text : text.slice(0, lineEnd.index);
  const match = /^([A-Za-z]+) +(\S+)(?: +HTTP\/1\.[01])? *$/.exec(requestLine);
  if (match === null) {
    throw batchSyntax(`Part ${position}: '${requestLine.slice(0, 80)}' is not a request line`);
  }
  const after = lineEnd === null ? '' : text.slice(lineEnd.index + lineEnd[0].length);
  const { headers, rest } = headersOf(after, `The request of part ${position}`);
  const id = part.headers['content-id'] ?? position;
  return {
    id,
    method: (match[1] as string).toUpperCase(),
    url: match[2] as string,
    headers,
    body: rest === '' ? undefined : rest,
    dependsOn: [],
  };
}
