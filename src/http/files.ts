/**
 * `GET /@/<filename>`: a stored upload, streamed by @fastify/static (`reply.sendFile`, built on
 * @fastify/send) with its content type, Content-Length, ETag/Last-Modified, conditional GET and
 * Range support. Only names the generator could have made are looked up, only regular files
 * (never a symlink) are served, and types that could run script in this origin go out as
 * sandboxed attachments. Every refusal is the same JSON 404.
 */
import fastifyStatic from '@fastify/static';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { fileNotFound, preconditionFailed, rangeNotSatisfiable } from '../errors.js';
import type { Services } from '../services.js';
import { isActiveContent } from '../uploads/content-policy.js';
import { isStoredName } from '../uploads/names.js';
import { sendError } from './errors.js';
import { gated } from './route-gate.js';

/**
 * Names never change content (a new upload gets a new name), but a file may be deleted and the
 * route may be behind a token: a client may keep a copy and revalidate it by ETag; shared caches
 * may not keep it.
 */
const CACHE_CONTROL = 'private, no-cache';

/**
 * Once @fastify/send has chosen the Content-Type (from the stored extension, never from what the
 * client declared), an active type becomes a sandboxed attachment.
 */
function sandboxActiveContent(reply: FastifyReply, filename: string): void {
  const type = reply.getHeader('content-type');
  if (typeof type === 'string' && isActiveContent(type)) {
    reply.header('content-disposition', `attachment; filename="${filename}"`);
    reply.header('content-security-policy', 'sandbox');
  }
}

/** @fastify/send reports 412 and 416 as http-errors; they get catalogue bodies too. */
function sendFileError(error: FastifyError, reply: FastifyReply): FastifyReply {
  switch (error.statusCode) {
    case 416: {
      // Keeps `Content-Range: bytes */<size>` (RFC 9110 §15.5.17).
      const range = (error as { headers?: Record<string, string> }).headers?.['Content-Range'];
      return sendError(
        reply,
        rangeNotSatisfiable(range === undefined ? {} : { 'Content-Range': range }),
      );
    }
    case 412:
      return sendError(reply, preconditionFailed());
    default:
      // Anything else goes on to the server's one error handler.
      throw error;
  }
}

export function fileRoutes(app: FastifyInstance, { uploads }: Services): void {
  const { directory } = uploads;

  app.register(async (scope) => {
    await scope.register(fastifyStatic, {
      root: directory,
      serve: false,
      dotfiles: 'ignore',
      index: false,
      acceptRanges: true,
      etag: true,
      lastModified: true,
      cacheControl: false,
    });

    scope.get<{ Params: { '*': string } }>(
      '/@/*',
      {
        ...gated({ kind: 'files', action: 'download' }),
        errorHandler: (error, _request, reply) => sendFileError(error, reply),
        onSend: async (request, reply, payload) => {
          const { '*': name } = request.params as { '*': string };
          if (reply.statusCode === 200 || reply.statusCode === 206)
            sandboxActiveContent(reply, name);
          return payload;
        },
      },
      async (request, reply) => {
        const name = request.params['*'];
        // First gate: the generator's own pattern, so `..`, `/`, `\`, `%`, NUL, dotfiles and
        // absolute paths never reach the file system. Second: a regular file, not a symlink or
        // directory planted in the uploads directory. Third: @fastify/send's containment in root.
        if (!isStoredName(name) || (await uploads.stat(name)) === null) throw fileNotFound();
        reply.header('x-content-type-options', 'nosniff');
        reply.header('cache-control', CACHE_CONTROL);
        return reply.sendFile(name);
      },
    );
  });
}
