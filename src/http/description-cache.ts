/**
 * The API description as served: built once per caller view and schema version, in slices of
 * event-loop time (slices.ts) so that other requests are answered while it is made,
 * then kept as bytes — plain, gzip and br (compressed on libuv's thread pool) — with an ETag.
 * Concurrent requests for one view share one build. There is one entry per view key (the role
 * under a policy: a role's grants, not its users, decide what it sees), replaced when the schema
 * changes; YAML is made only when asked for.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { DESCRIPTION_BROTLI_QUALITY } from '../limits.js';
import { jsonPieces, yamlPieces } from '../openapi/serialize.js';
import { runInSlices } from '../slices.js';
import { JSON_TYPE } from './json-rows.js';
import type { OpenApiDocument } from './openapi-document.js';

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

export type Format = 'json' | 'yaml';

/** One format of one description, ready to send. */
export interface Representation {
  readonly type: string;
  /** Weak: the same for every coding of these bytes. */
  readonly etag: string;
  readonly identity: Buffer;
  readonly gzip: Buffer;
  readonly br: Buffer;
}

/** The description's assembly as steps (http/openapi-document.ts's documentSteps for one view). */
export type DocumentSteps = () => Generator<void, OpenApiDocument>;

interface Entry {
  readonly version: number;
  readonly steps: DocumentSteps;
  readonly formats: Partial<Record<Format, Promise<Representation>>>;
}

const TYPES: Readonly<Record<Format, string>> = {
  json: JSON_TYPE,
  yaml: 'application/x-yaml',
};

/**
 * Text pieces as one buffer with the SHA-256 of its bytes, a step per piece and per copy (the
 * /openapi.json description and OData's $metadata): megabytes encoded or copied at once would
 * hold the event loop for milliseconds.
 */
export function* hashedBytes(
  pieces: Iterable<string>,
): Generator<void, { bytes: Buffer; hash: string }> {
  const hash = createHash('sha256');
  const chunks: Buffer[] = [];
  let length = 0;
  for (const piece of pieces) {
    const chunk = Buffer.from(piece);
    hash.update(chunk);
    chunks.push(chunk);
    length += chunk.length;
    yield;
  }
  const bytes = Buffer.allocUnsafe(length);
  let offset = 0;
  for (const chunk of chunks) {
    offset += chunk.copy(bytes, offset);
    yield;
  }
  return { bytes, hash: hash.digest('base64url') };
}

/** The document's text in `format`, as bytes, with the hash of those bytes. */
function* encode(
  steps: DocumentSteps,
  format: Format,
): Generator<void, { bytes: Buffer; hash: string }> {
  const document = yield* steps();
  return yield* hashedBytes(format === 'json' ? jsonPieces(document) : yamlPieces(document));
}

async function represent(steps: DocumentSteps, format: Format): Promise<Representation> {
  const { bytes, hash } = await runInSlices(encode(steps, format));
  const [zipped, brotlied] = await Promise.all([
    gzip(bytes),
    brotli(bytes, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: DESCRIPTION_BROTLI_QUALITY,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
  ]);
  return { type: TYPES[format], etag: `W/"${hash}"`, identity: bytes, gzip: zipped, br: brotlied };
}

export class DescriptionCache {
  private readonly entries = new Map<string, Entry>();

  /**
   * The description for view `key` of schema `version` in `format`; `steps` assembles it when
   * this view has none for that version yet.
   */
  get(
    key: string,
    version: number,
    format: Format,
    steps: () => DocumentSteps,
  ): Promise<Representation> {
    let entry = this.entries.get(key);
    if (entry?.version !== version) {
      entry = { version, steps: steps(), formats: {} };
      this.entries.set(key, entry);
    }
    const made = entry.formats[format];
    if (made) return made;
    const making = represent(entry.steps, format);
    entry.formats[format] = making;
    const current = entry;
    // A failed build is not kept: the next request tries again.
    making.catch(() => {
      if (current.formats[format] === making) delete current.formats[format];
    });
    return making;
  }
}
