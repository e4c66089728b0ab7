/**
 * UploadBatch on a real temporary directory: exclusive creation, sizes, the size limit, a disk
 * that fails, and a discard that also catches a file still being written.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { ApiError } from '../../../src/errors.js';
import { StorageError, UploadAbandoned, UploadBatch } from '../../../src/uploads/store.js';

let dir: string;

/** store() opens its file before reading; wait for that, as busboy's parts simply buffer. */
async function fileCreated(): Promise<void> {
  while ((await readdir(dir)).length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** @fastify/multipart puts an error listener on every part stream; so do the tests. */
function partStream(): PassThrough & { truncated?: boolean } {
  const stream = new PassThrough() as PassThrough & { truncated?: boolean };
  stream.on('error', () => {});
  return stream;
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-store-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('UploadBatch', () => {
  test('stores a stream under a new name and reports its size', async () => {
    const batch = new UploadBatch(dir, 1000);
    const stored = await batch.store(
      'notes.txt',
      Readable.from([Buffer.from('hello '), Buffer.from('world')]),
    );
    expect(stored.filename).toMatch(/^[0-9a-f]{32}\.txt$/);
    expect(stored.size).toBe(11);
    expect(await readFile(path.join(dir, stored.filename), 'utf8')).toBe('hello world');
  });

  test('a part that passes the limit rejects with fileTooLarge', async () => {
    const batch = new UploadBatch(dir, 4);
    const file = partStream();
    const storing = batch.store('big.bin', file);
    await fileCreated();
    // What busboy does at the limit: push up to it, flag the stream, emit `limit`, skip the rest
    // of the part and end the stream.
    file.write(Buffer.from('abcd'));
    file.truncated = true;
    file.emit('limit');
    file.end();
    const error = await storing.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('FILE_TOO_LARGE');
    await batch.discard();
    expect(await readdir(dir)).toEqual([]);
  });

  test('a truncated part that ended normally is still too large', async () => {
    const batch = new UploadBatch(dir, 4);
    const file = Readable.from([Buffer.from('abcd')]) as Readable & { truncated?: boolean };
    file.truncated = true;
    await expect(batch.store('big.bin', file)).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
  });

  test('a body error is passed on as it is, not as a disk failure', async () => {
    const batch = new UploadBatch(dir, 1000);
    const file = partStream();
    const storing = batch.store('cut.bin', file);
    await fileCreated();
    file.write('partial');
    const cause = new Error('Part terminated early');
    setImmediate(() => file.destroy(cause));
    await expect(storing).rejects.toBe(cause);
  });

  test('a directory that cannot be written is a StorageError', async () => {
    const batch = new UploadBatch(path.join(dir, 'missing'), 1000);
    const error = await batch.store('a.txt', Readable.from(['x'])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect(((error as StorageError).cause as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  test('discard removes every file of the batch', async () => {
    const batch = new UploadBatch(dir, 1000);
    await batch.store('a.txt', Readable.from(['a']));
    await batch.store('b.txt', Readable.from(['b']));
    expect(await readdir(dir)).toHaveLength(2);
    await batch.discard();
    expect(await readdir(dir)).toEqual([]);
  });

  test('a file still being written when the batch is discarded is removed when it finishes', async () => {
    const batch = new UploadBatch(dir, 1000);
    const file = partStream();
    const storing = batch.store('slow.txt', file);
    await fileCreated();
    file.write('first half, ');
    await batch.discard();
    file.end('second half');
    await storing;
    expect(await readdir(dir)).toEqual([]);
  });

  test('after a discard no new file is started', async () => {
    const batch = new UploadBatch(dir, 1000);
    await batch.discard();
    await expect(batch.store('late.txt', Readable.from(['x']))).rejects.toBeInstanceOf(
      UploadAbandoned,
    );
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('UploadBatch with a part destroyed while its file was opening', () => {
  test('is a body error, not a disk failure', async () => {
    const batch = new UploadBatch(dir, 1000);
    const file = partStream();
    const cause = new Error('Unexpected end of multipart data');
    file.destroy(cause);
    await expect(batch.store('gone.bin', file)).rejects.toBe(cause);
    await batch.discard();
    expect(await readdir(dir)).toEqual([]);
  });
});
