/**
 * `POST /upload`: multipart/form-data parts named `files` stream straight to new files in the
 * uploads directory; the answer is one record per file. Multipart parsing lives in a scope of its
 * own so no other route's body handling changes. Any failure — and a client that goes away before
 * the answer — removes every file of the request.
 */
import type { IncomingMessage } from 'node:http';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  ApiError,
  fileTooLarge,
  forbiddenFieldName,
  internalError,
  invalidBody,
  invalidHost,
  malformedMultipart,
  noFiles,
  notMultipart,
  tooManyFiles,
  tooManyParts,
  wrongFileField,
} from '../errors.js';
import { requestLog } from '../log.js';
import type { Services } from '../services.js';
import { accessBase, type FileRecord, fileRecord } from '../uploads/record.js';
import { StorageError } from '../uploads/store.js';
import { gated } from './route-gate.js';

/** The one accepted file field name (spec: "a part whose key is exactly `files`"). */
export const FILES_FIELD = 'files';
/** Text fields are accepted and ignored; these bound what busboy keeps of them in memory. */
const MAX_TEXT_FIELDS = 100;
const MAX_TEXT_FIELD_BYTES = 64 * 1024;
const MAX_PART_HEADERS = 100;

/** @fastify/multipart's errors (FST_*) and busboy's parse errors → catalogue errors. */
function toUploadError(error: unknown, maxFiles: number, maxFileSize: number): ApiError {
  if (error instanceof ApiError) return error;
  switch ((error as { code?: unknown }).code) {
    case 'FST_FILES_LIMIT':
      return tooManyFiles(maxFiles);
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return tooManyParts();
    case 'FST_REQ_FILE_TOO_LARGE':
      return fileTooLarge(maxFileSize);
    case 'FST_PROTO_VIOLATION':
      return forbiddenFieldName();
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return invalidBody('A form field declared as application/json is not valid JSON');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return notMultipart();
    default:
      // Busboy's "Unexpected end of multipart data", "Part terminated early", "Boundary not
      // found", a premature close: the body, not the server, is at fault.
      return malformedMultipart();
  }
}

/**
 * After a failure the answer goes out at once (curl and fetch stop sending when they see it) and
 * whatever the client still sends is read and dropped, so a client that insists on finishing its
 * body is not left stalled; the server's requestTimeout bounds that.
 */
function discardRestOfBody(raw: IncomingMessage): void {
  raw.unpipe();
  if (!raw.readableEnded && !raw.destroyed) raw.resume();
}

/**
 * Auth mode: accessURLs are signed links, so `<img src>` works without a header. A link lets
 * whoever holds it download that one file until it expires, so it is made only for an uploader
 * whose role may download files (docs/auth.md); for any other, the plain URL.
 */
function linkSigner(
  { auth, policy }: Services,
  request: FastifyRequest,
): ((filename: string) => string) | null {
  if (auth === undefined) return null;
  const role = request.access?.role;
  if (policy !== undefined && (role === undefined || !policy.mayFiles(role, 'download'))) {
    return null;
  }
  const now = Date.now();
  return (filename) => auth.fileLinks.query(filename, now);
}

export function uploadRoutes(app: FastifyInstance, services: Services): void {
  const { config, metrics, log, uploads } = services;
  const { maxFiles, maxFileSize } = config;

  app.register(async (scope) => {
    // Only multipart is parsed here; any other body is refused before a byte of it is read.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(notMultipart()));
    await scope.register(multipart, {
      // Keep the name as sent (busboy would otherwise cut it to its last path segment); the
      // stored name never derives from it beyond a plain extension.
      preservePath: true,
      limits: {
        fileSize: maxFileSize,
        files: maxFiles,
        fields: MAX_TEXT_FIELDS,
        fieldSize: MAX_TEXT_FIELD_BYTES,
        parts: maxFiles + MAX_TEXT_FIELDS,
        headerPairs: MAX_PART_HEADERS,
      },
    });

    scope.post(
      '/upload',
      gated({ kind: 'files', action: 'upload' }),
      async (request: FastifyRequest, reply) => {
        const base = accessBase(config.baseUrl, request.headers.host);
        if (base === null) throw invalidHost();
        if (!request.isMultipart()) throw notMultipart();
        const sign = linkSigner(services, request);

        const batch = uploads.batch(maxFileSize);
        // A client that leaves before the answer never learns the names: remove the files.
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) void batch.discard();
        });
        const records: FileRecord[] = [];
        try {
          for await (const part of request.parts()) {
            if (part.type !== 'file') continue;
            // An <input type="file"> left empty sends a part with an empty file name: not a file.
            if (!part.filename) {
              part.file.resume();
              continue;
            }
            if (part.fieldname !== FILES_FIELD) throw wrongFileField(part.fieldname);
            const stored = await batch.store(part.filename, part.file);
            records.push(
              fileRecord(
                {
                  fieldname: part.fieldname,
                  originalname: part.filename,
                  encoding: part.encoding,
                  mimetype: part.mimetype,
                  destination: uploads.directory,
                  filename: stored.filename,
                  size: stored.size,
                },
                base,
                sign === null ? '' : sign(stored.filename),
              ),
            );
          }
          if (records.length === 0) throw noFiles();
          metrics?.countUpload(records.map((record) => record.size));
        } catch (error) {
          await batch.discard();
          discardRestOfBody(request.raw);
          if (error instanceof StorageError) {
            requestLog(log, request).error({ err: error.cause }, 'cannot store an upload');
            throw internalError();
          }
          throw toUploadError(error, maxFiles, maxFileSize);
        }
        return { success: true, data: records };
      },
    );
  });
}
