/**
 * Several gateways serve one uploads directory (a shared volume). A file
 * uploaded through one gateway is served, byte for byte and with the same validators, by the
 * other, and the other way round; a name neither stored is 404 on both.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/multipart.js';

interface FileRecord {
  readonly filename: string;
  readonly path: string;
  readonly destination: string;
  readonly size: number;
  readonly accessURL: string;
}

let db: TestDatabase;
let shared: string;
let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase('CREATE TABLE t (id INT PRIMARY KEY);');
  shared = await mkdtemp(path.join(os.tmpdir(), 'tablegate-shared-uploads-'));
  a = await startTestGateway(db.name, { uploadsDir: shared });
  b = await startTestGateway(db.name, { uploadsDir: shared });
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await db?.drop();
  if (shared) await rm(shared, { recursive: true, force: true });
});

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

async function upload(gateway: TestGateway, name: string, data: Uint8Array, type: string) {
  const body = new FormData();
  body.append('files', new Blob([data as BlobPart], { type }), name);
  const response = await fetch(`${gateway.url}/upload`, { method: 'POST', body });
  expect(response.status).toBe(200);
  const answer = (await response.json()) as { success: boolean; data: FileRecord[] };
  expect(answer.success).toBe(true);
  return answer.data[0] as FileRecord;
}

test('uploaded through one gateway, served by the other: same bytes, type, length and ETag; Range too', async () => {
  const data = randomBytes(300 * 1024);
  const record = await upload(a, 'photo.png', data, 'image/png');
  expect([record.destination, record.path]).toEqual([shared, path.join(shared, record.filename)]);
  expect(await readdir(shared)).toEqual([record.filename]);

  const fromA = await fetch(`${a.url}/@/${record.filename}`);
  const fromB = await fetch(`${b.url}/@/${record.filename}`);
  expect([fromB.status, fromB.headers.get('content-type')]).toEqual([200, 'image/png']);
  expect(fromB.headers.get('content-length')).toBe(String(data.length));
  expect(sha256(new Uint8Array(await fromB.arrayBuffer()))).toBe(sha256(data));
  await fromA.arrayBuffer();
  // Validators come from the file itself: a client may revalidate at either gateway.
  const etag = fromA.headers.get('etag');
  expect(etag).not.toBeNull();
  expect(fromB.headers.get('etag')).toBe(etag);
  // A raw request: fetch adds `Cache-Control: no-cache` to conditional requests.
  const revalidated = await rawRequest(b.url, {
    path: `/@/${record.filename}`,
    headers: { 'if-none-match': etag as string },
  });
  expect(revalidated.status).toBe(304);

  const range = await fetch(`${b.url}/@/${record.filename}`, {
    headers: { range: 'bytes=100-199' },
  });
  expect([range.status, range.headers.get('content-range')]).toEqual([
    206,
    `bytes 100-199/${data.length}`,
  ]);
  expect(Buffer.from(await range.arrayBuffer()).equals(data.subarray(100, 200))).toBe(true);
});

test('the other way round, and an unknown name is 404 on both', async () => {
  const text = new TextEncoder().encode('written through B\n');
  const record = await upload(b, 'note.txt', text, 'text/plain');
  const fromA = await fetch(`${a.url}/@/${record.filename}`);
  expect([fromA.status, await fromA.text()]).toEqual([200, 'written through B\n']);
  for (const gateway of [a, b]) {
    const missing = await fetch(`${gateway.url}/@/${'0'.repeat(32)}.txt`);
    expect([missing.status, await missing.json()]).toEqual([
      404,
      { success: false, message: 'File not found', code: 'FILE_NOT_FOUND' },
    ]);
  }
});
