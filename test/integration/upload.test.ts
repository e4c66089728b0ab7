/**
 * POST /upload and GET /@/<filename> against the real server over HTTP (docs/uploads.md): exact
 * records, limits that leave nothing on disk, aborted uploads, byte-exact round trips, Range,
 * ETag, sandboxed active types, and every way out of the uploads directory answering 404.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import {
  abortedUpload,
  multipartBody,
  partHead,
  postMultipart,
  rawRequest,
} from '../helpers/multipart.js';

const RECORD_KEYS = [
  'fieldname',
  'originalname',
  'encoding',
  'mimetype',
  'destination',
  'filename',
  'path',
  'size',
  'accessURL',
];
const STORED = /^[0-9a-f]{32}(?:\.[A-Za-z0-9]{1,10})?$/;
const SMALL_LIMIT = 64 * 1024;
const SMALL_MAX_FILES = 3;

interface FileRecord {
  fieldname: string;
  originalname: string;
  encoding: string;
  mimetype: string;
  destination: string;
  filename: string;
  path: string;
  size: number;
  accessURL: string;
}

interface UploadAnswer {
  success: boolean;
  data: FileRecord[];
}

interface ErrorBody {
  success: false;
  message: string;
  code: string;
}

let db: TestDatabase;
let open: TestGateway;
/** maxFileSize 64 KiB, maxFiles 3, a configured base URL. */
let small: TestGateway;
let outside: string;

beforeAll(async () => {
  db = await createTestDatabase('CREATE TABLE t (id INT PRIMARY KEY);');
  open = await startTestGateway(db.name);
  small = await startTestGateway(db.name, {
    maxFileSize: SMALL_LIMIT,
    maxFiles: SMALL_MAX_FILES,
    baseUrl: 'https://files.example.com/',
  });
  outside = await mkdtemp(path.join(os.tmpdir(), 'tablegate-outside-'));
  await writeFile(path.join(outside, 'secret.txt'), 'top secret\n');
});

afterAll(async () => {
  await open?.close();
  await small?.close();
  await db?.drop();
  if (outside) await rm(outside, { recursive: true, force: true });
});

function listing(gateway: TestGateway): Promise<string[]> {
  return readdir(gateway.config.uploadsDir).then((names) => names.sort());
}

function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

function form(
  files: { name: string; data: Uint8Array | string; type?: string }[],
  field = 'files',
) {
  const body = new FormData();
  for (const file of files) {
    body.append(field, new Blob([file.data as BlobPart], { type: file.type ?? '' }), file.name);
  }
  return body;
}

async function upload(
  gateway: TestGateway,
  body: FormData,
): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${gateway.url}/upload`, { method: 'POST', body });
  return { status: response.status, json: await response.json() };
}

async function uploadOk(gateway: TestGateway, body: FormData): Promise<FileRecord[]> {
  const { status, json } = await upload(gateway, body);
  expect(status).toBe(200);
  const answer = json as UploadAnswer;
  expect(Object.keys(answer)).toEqual(['success', 'data']);
  expect(answer.success).toBe(true);
  return answer.data;
}

function expectError(json: unknown, code: string): ErrorBody {
  const body = json as ErrorBody;
  expect(Object.keys(body).sort()).toEqual(['code', 'message', 'success']);
  expect(body.success).toBe(false);
  expect(body.code).toBe(code);
  expect(typeof body.message).toBe('string');
  return body;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('POST /upload', () => {
  test('one file: every record field exactly, bytes on disk', async () => {
    const [record] = await uploadOk(
      open,
      form([{ name: 'hello.txt', data: 'hello, world\n', type: 'text/plain' }]),
    );
    const rec = record as FileRecord;
    expect(Object.keys(rec)).toEqual(RECORD_KEYS);
    const destination = path.resolve(open.config.uploadsDir);
    expect(rec).toEqual({
      fieldname: 'files',
      originalname: 'hello.txt',
      encoding: '7bit',
      mimetype: 'text/plain',
      destination,
      filename: rec.filename,
      path: path.join(destination, rec.filename),
      size: 13,
      accessURL: `${open.url}/@/${rec.filename}`,
    });
    expect(rec.filename).toMatch(/^[0-9a-f]{32}\.txt$/);
    expect(path.isAbsolute(rec.path)).toBe(true);
    expect(await readFile(rec.path, 'utf8')).toBe('hello, world\n');
  });

  test('three files in one request: three records in order, distinct names', async () => {
    const files = [
      { name: 'a.png', data: randomBytes(1000), type: 'image/png' },
      { name: 'b.json', data: '{"b":1}', type: 'application/json' },
      { name: 'c', data: 'no extension', type: 'application/octet-stream' },
    ];
    const records = await uploadOk(open, form(files));
    expect(records.map((r) => r.originalname)).toEqual(['a.png', 'b.json', 'c']);
    expect(records.map((r) => r.mimetype)).toEqual([
      'image/png',
      'application/json',
      'application/octet-stream',
    ]);
    expect(records.map((r) => r.size)).toEqual([1000, 7, 12]);
    expect(new Set(records.map((r) => r.filename)).size).toBe(3);
    expect(records[0]?.filename).toMatch(/^[0-9a-f]{32}\.png$/);
    expect(records[2]?.filename).toMatch(/^[0-9a-f]{32}$/);
    for (const [i, r] of records.entries()) {
      expect(Object.keys(r)).toEqual(RECORD_KEYS);
      expect(await readFile(r.path)).toEqual(Buffer.from(files[i]?.data as Uint8Array | string));
    }
  });

  test('a UTF-8 file name is kept intact (raw UTF-8 from FormData, and RFC 5987 filename*)', async () => {
    const name = 'résumé 履歴書.pdf';
    const [viaFetch] = await uploadOk(
      open,
      form([{ name, data: '%PDF-1.4', type: 'application/pdf' }]),
    );
    expect(viaFetch?.originalname).toBe(name);
    expect(viaFetch?.filename).toMatch(/^[0-9a-f]{32}\.pdf$/);

    const response = await postMultipart(open.url, [
      {
        name: 'files',
        disposition: `form-data; name="files"; filename*=UTF-8''${encodeURIComponent(name)}`,
        contentType: 'application/pdf',
        body: '%PDF-1.4',
      },
    ]);
    expect(response.status).toBe(200);
    expect((response.json() as UploadAnswer).data[0]?.originalname).toBe(name);
  });

  test('the name as sent, path included; only a plain extension is kept', async () => {
    const response = await postMultipart(open.url, [
      { name: 'files', filename: '../../etc/passwd', contentType: 'text/plain', body: 'x' },
      { name: 'files', filename: 'C:\\Users\\me\\photo.JPG', contentType: 'image/jpeg', body: 'y' },
      { name: 'files', filename: 'backup.tar.gz', contentType: 'application/gzip', body: 'z' },
      { name: 'files', filename: '.bashrc', contentType: 'text/plain', body: 'w' },
    ]);
    expect(response.status).toBe(200);
    const records = (response.json() as UploadAnswer).data;
    expect(records.map((r) => r.originalname)).toEqual([
      '../../etc/passwd',
      'C:\\Users\\me\\photo.JPG',
      'backup.tar.gz',
      '.bashrc',
    ]);
    const destination = path.resolve(open.config.uploadsDir);
    expect(records.map((r) => r.filename.slice(32))).toEqual(['', '.JPG', '.gz', '']);
    for (const r of records) {
      expect(r.filename).toMatch(STORED);
      expect(path.dirname(r.path)).toBe(destination);
    }
  });

  test('an empty file is stored and served with size 0', async () => {
    const [record] = await uploadOk(
      open,
      form([{ name: 'empty.txt', data: '', type: 'text/plain' }]),
    );
    expect(record?.size).toBe(0);
    expect((await readFile(record?.path as string)).length).toBe(0);
    const response = await fetch(record?.accessURL as string);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe('0');
    expect((await response.arrayBuffer()).byteLength).toBe(0);
  });

  test('a file of several MiB round-trips byte-exact through accessURL', async () => {
    const data = randomBytes(6 * 1024 * 1024 + 123);
    const [record] = await uploadOk(
      open,
      form([{ name: 'big.bin', data, type: 'application/octet-stream' }]),
    );
    expect(record?.size).toBe(data.length);
    const response = await fetch(record?.accessURL as string);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    expect(response.headers.get('content-length')).toBe(String(data.length));
    expect(sha256(new Uint8Array(await response.arrayBuffer()))).toBe(sha256(data));
  });

  test('encoding and mimetype are reported as the part declares them', async () => {
    const response = await postMultipart(open.url, [
      {
        name: 'files',
        filename: 'raw.bin',
        contentType: 'image/x-custom',
        headers: ['Content-Transfer-Encoding: binary'],
        body: Buffer.from([0, 1, 2, 255]),
      },
      { name: 'files', filename: 'untyped.dat', body: 'no content type' },
    ]);
    expect(response.status).toBe(200);
    const [declared, untyped] = (response.json() as UploadAnswer).data;
    expect(declared?.encoding).toBe('binary');
    expect(declared?.mimetype).toBe('image/x-custom');
    expect(declared?.size).toBe(4);
    // RFC 7578 §4.4: a part without Content-Type is text/plain.
    expect(untyped?.encoding).toBe('7bit');
    expect(untyped?.mimetype).toBe('text/plain');
  });

  test('text fields are ignored; an empty file input (no file name) is skipped', async () => {
    const response = await postMultipart(open.url, [
      { name: 'note', body: 'ignored' },
      { name: 'avatar', filename: '', contentType: 'application/octet-stream', body: '' },
      { name: 'files', filename: 'kept.txt', contentType: 'text/plain', body: 'kept' },
      { name: 'files', body: 'a text field named files' },
    ]);
    expect(response.status).toBe(200);
    const records = (response.json() as UploadAnswer).data;
    expect(records.map((r) => r.originalname)).toEqual(['kept.txt']);
  });

  test('accessURL starts with --base-url when set, else http://<Host header>', async () => {
    const [configured] = await uploadOk(small, form([{ name: 'x.txt', data: 'x' }]));
    expect(configured?.accessURL).toBe(`https://files.example.com/@/${configured?.filename}`);

    const viaHost = await postMultipart(
      open.url,
      [{ name: 'files', filename: 'h.txt', contentType: 'text/plain', body: 'h' }],
      { host: 'api.example.org:8443' },
    );
    expect(viaHost.status).toBe(200);
    const record = (viaHost.json() as UploadAnswer).data[0];
    expect(record?.accessURL).toBe(`http://api.example.org:8443/@/${record?.filename}`);
  });

  test('a Host header that is not a plain host[:port] is refused (400) when no base URL is set', async () => {
    const before = await listing(open);
    const response = await postMultipart(
      open.url,
      [{ name: 'files', filename: 'h.txt', contentType: 'text/plain', body: 'h' }],
      { host: 'evil.example/@x' },
    );
    expect(response.status).toBe(400);
    expectError(response.json(), 'INVALID_HOST');
    expect(await listing(open)).toEqual(before);
  });

  test('a file part under another field name: 400 naming `files`, nothing stays on disk', async () => {
    const before = await listing(open);
    const { status, json } = await upload(open, form([{ name: 'a.txt', data: 'a' }], 'file'));
    expect(status).toBe(400);
    const body = expectError(json, 'WRONG_FILE_FIELD');
    expect(body.message).toContain("'files'");
    expect(body.message).toContain("'file'");
    expect(await listing(open)).toEqual(before);

    // A good file first, then a wrong one: the good one is removed too.
    const mixed = await postMultipart(open.url, [
      { name: 'files', filename: 'good.txt', contentType: 'text/plain', body: randomBytes(50_000) },
      { name: 'upload', filename: 'bad.txt', contentType: 'text/plain', body: 'bad' },
      { name: 'files', filename: 'after.txt', contentType: 'text/plain', body: 'after' },
    ]);
    expect(mixed.status).toBe(400);
    expectError(mixed.json(), 'WRONG_FILE_FIELD');
    expect(await listing(open)).toEqual(before);
  });

  test('too large: 413, nothing stays on disk, an earlier good file of the request included', async () => {
    const before = await listing(small);
    const { status, json } = await upload(
      small,
      form([{ name: 'big.bin', data: randomBytes(SMALL_LIMIT + 1) }]),
    );
    expect(status).toBe(413);
    expectError(json, 'FILE_TOO_LARGE');
    expect(await listing(small)).toEqual(before);

    const mixed = await upload(
      small,
      form([
        { name: 'ok.bin', data: randomBytes(1000) },
        { name: 'big.bin', data: randomBytes(5 * SMALL_LIMIT) },
        { name: 'later.bin', data: randomBytes(1000) },
      ]),
    );
    expect(mixed.status).toBe(413);
    expectError(mixed.json, 'FILE_TOO_LARGE');
    expect(await listing(small)).toEqual(before);

    // Exactly at the limit is allowed, and the connection still works afterwards.
    const [atLimit] = await uploadOk(
      small,
      form([{ name: 'edge.bin', data: randomBytes(SMALL_LIMIT) }]),
    );
    expect(atLimit?.size).toBe(SMALL_LIMIT);
  });

  test('too many files: 413, nothing stays on disk; exactly the maximum is fine', async () => {
    const before = await listing(small);
    const files = Array.from({ length: SMALL_MAX_FILES + 1 }, (_, i) => ({
      name: `f${i}.txt`,
      data: `file ${i}`,
    }));
    const { status, json } = await upload(small, form(files));
    expect(status).toBe(413);
    expectError(json, 'TOO_MANY_FILES');
    expect(await listing(small)).toEqual(before);

    const records = await uploadOk(small, form(files.slice(0, SMALL_MAX_FILES)));
    expect(records).toHaveLength(SMALL_MAX_FILES);
  });

  test('a body that is not multipart: 415 JSON, whatever its type', async () => {
    const json = await fetch(`${open.url}/upload`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"files":"x"}',
    });
    expect(json.status).toBe(415);
    expectError(await json.json(), 'NOT_MULTIPART');

    const octets = await fetch(`${open.url}/upload`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: randomBytes(2 * 1024 * 1024),
    });
    expect(octets.status).toBe(415);
    expectError(await octets.json(), 'NOT_MULTIPART');

    const none = await rawRequest(open.url, { method: 'POST', path: '/upload' });
    expect(none.status).toBe(415);
    expectError(none.json(), 'NOT_MULTIPART');
  });

  test('multipart without any file: 400', async () => {
    const onlyText = await postMultipart(open.url, [{ name: 'files', body: 'just text' }]);
    expect(onlyText.status).toBe(400);
    expectError(onlyText.json(), 'NO_FILES');

    const empty = await rawRequest(open.url, {
      method: 'POST',
      path: '/upload',
      headers: { 'content-type': 'multipart/form-data; boundary=xyz', 'content-length': 0 },
    });
    expect(empty.status).toBe(400);
    expectError(empty.json(), 'NO_FILES');
  });

  test('a malformed multipart body: 400, nothing stays on disk', async () => {
    const before = await listing(open);
    const { body, contentType } = multipartBody([
      { name: 'files', filename: 'cut.txt', contentType: 'text/plain', body: randomBytes(10_000) },
    ]);
    const truncated = body.subarray(0, body.length - 40);
    const cut = await rawRequest(open.url, {
      method: 'POST',
      path: '/upload',
      headers: { 'content-type': contentType, 'content-length': truncated.length },
      body: truncated,
    });
    expect(cut.status).toBe(400);
    expectError(cut.json(), 'MALFORMED_MULTIPART');

    const noBoundary = await rawRequest(open.url, {
      method: 'POST',
      path: '/upload',
      headers: { 'content-type': 'multipart/form-data', 'content-length': 5 },
      body: 'hello',
    });
    expect(noBoundary.status).toBe(400);
    expectError(noBoundary.json(), 'MALFORMED_MULTIPART');

    const prototype = await postMultipart(open.url, [
      { name: '__proto__', body: 'x' },
      { name: 'files', filename: 'p.txt', contentType: 'text/plain', body: 'p' },
    ]);
    expect(prototype.status).toBe(400);
    expectError(prototype.json(), 'FORBIDDEN_FIELD_NAME');
    expect(await listing(open)).toEqual(before);
  });

  test('a client that disconnects mid-upload leaves nothing behind', async () => {
    const before = await listing(open);
    const boundary = `tg${randomBytes(8).toString('hex')}`;
    const first = multipartBody(
      [
        {
          name: 'files',
          filename: 'whole.bin',
          contentType: 'application/octet-stream',
          body: randomBytes(200_000),
        },
      ],
      boundary,
    ).body;
    // The first file complete (its closing delimiter dropped), the second one half sent.
    const sent = Buffer.concat([
      first.subarray(0, first.length - `--${boundary}--\r\n`.length),
      partHead(
        { name: 'files', filename: 'half.bin', contentType: 'application/octet-stream', body: '' },
        boundary,
      ),
      randomBytes(300_000),
    ]);
    let sawFiles = false;
    const watcher = waitFor(async () => {
      sawFiles ||= (await listing(open)).length > before.length;
      return sawFiles;
    }, 3000).catch(() => {});
    await abortedUpload(open.url, boundary, sent, sent.length + 10_000_000, 400);
    await watcher;
    expect(sawFiles).toBe(true);
    await waitFor(async () => (await listing(open)).join() === before.join());
    expect(await listing(open)).toEqual(before);
    // The server is still fine.
    expect((await fetch(`${open.url}/health`)).status).toBe(200);
  });
});

describe('GET /@/<filename>', () => {
  let text: FileRecord;

  beforeAll(async () => {
    const data = Array.from({ length: 100 }, (_, i) => String(i % 10)).join('');
    [text] = (await uploadOk(open, form([{ name: 'digits.txt', data, type: 'text/plain' }]))) as [
      FileRecord,
    ];
  });

  test('streams the file with type, length, ETag, Last-Modified and nosniff', async () => {
    const response = await fetch(text.accessURL);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(response.headers.get('content-length')).toBe('100');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('etag')).toMatch(/^(W\/)?"[^"]+"$/);
    expect(response.headers.get('last-modified')).toMatch(/GMT$/);
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(response.headers.get('content-disposition')).toBeNull();
    expect(await response.text()).toBe(await readFile(text.path, 'utf8'));
  });

  test('HEAD gives the headers without a body', async () => {
    const response = await rawRequest(open.url, { method: 'HEAD', path: `/@/${text.filename}` });
    expect(response.status).toBe(200);
    expect(response.headers['content-length']).toBe('100');
    expect(response.body.length).toBe(0);
  });

  test('ETag: 304 on If-None-Match, 200 when it does not match', async () => {
    // Raw requests: fetch adds `Cache-Control: no-cache` to conditional requests (Fetch §4.5),
    // which rightly forces a full answer.
    const filePath = `/@/${text.filename}`;
    const first = await rawRequest(open.url, { path: filePath });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\/"[0-9a-f]+-[0-9a-f]+"$/);
    const again = await rawRequest(open.url, {
      path: filePath,
      headers: { 'if-none-match': etag },
    });
    expect(again.status).toBe(304);
    expect(again.headers.etag).toBe(etag);
    expect(again.body.length).toBe(0);
    const since = await rawRequest(open.url, {
      path: filePath,
      headers: { 'if-modified-since': first.headers['last-modified'] as string },
    });
    expect(since.status).toBe(304);
    const other = await rawRequest(open.url, {
      path: filePath,
      headers: { 'if-none-match': '"something-else"' },
    });
    expect(other.status).toBe(200);
    expect(other.body.length).toBe(100);
    const failed = await rawRequest(open.url, {
      path: filePath,
      headers: { 'if-match': '"something-else"' },
    });
    expect(failed.status).toBe(412);
    expectError(failed.json(), 'PRECONDITION_FAILED');
  });

  test('Range: 206 with Content-Range and exactly the bytes asked for', async () => {
    const whole = await readFile(text.path);
    const middle = await fetch(text.accessURL, { headers: { range: 'bytes=10-19' } });
    expect(middle.status).toBe(206);
    expect(middle.headers.get('content-range')).toBe('bytes 10-19/100');
    expect(middle.headers.get('content-length')).toBe('10');
    expect(Buffer.from(await middle.arrayBuffer())).toEqual(whole.subarray(10, 20));

    const suffix = await fetch(text.accessURL, { headers: { range: 'bytes=-7' } });
    expect(suffix.status).toBe(206);
    expect(suffix.headers.get('content-range')).toBe('bytes 93-99/100');
    expect(Buffer.from(await suffix.arrayBuffer())).toEqual(whole.subarray(93));

    const open_ = await fetch(text.accessURL, { headers: { range: 'bytes=95-' } });
    expect(open_.status).toBe(206);
    expect(Buffer.from(await open_.arrayBuffer())).toEqual(whole.subarray(95));

    const beyond = await fetch(text.accessURL, { headers: { range: 'bytes=500-600' } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe('bytes */100');
    expectError(await beyond.json(), 'RANGE_NOT_SATISFIABLE');
  });

  test.each([
    [
      'page.html',
      'text/html; charset=utf-8',
      '<!doctype html><script>alert(document.cookie)</script>',
    ],
    [
      'image.svg',
      'image/svg+xml',
      '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
    ],
    ['doc.xml', 'application/xml', '<?xml version="1.0"?><a/>'],
    ['doc.xhtml', 'application/xhtml+xml', '<html xmlns="http://www.w3.org/1999/xhtml"/>'],
    ['app.js', 'application/javascript; charset=utf-8', 'alert(1)'],
    ['module.mjs', 'application/javascript; charset=utf-8', 'export {}'],
  ])('%s is served as a sandboxed attachment', async (name, type, data) => {
    const [record] = await uploadOk(open, form([{ name, data, type: 'text/plain' }]));
    const response = await fetch(record?.accessURL as string);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')?.toLowerCase()).toBe(type.toLowerCase());
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="${record?.filename}"`,
    );
    expect(response.headers.get('content-security-policy')).toBe('sandbox');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await response.text()).toBe(data);
  });

  test('a missing file is the JSON 404', async () => {
    const response = await rawRequest(open.url, { path: `/@/${'0'.repeat(32)}.txt` });
    expect(response.status).toBe(404);
    expectError(response.json(), 'FILE_NOT_FOUND');
  });

  test('every way out of the uploads directory is a JSON 404', async () => {
    const dir = open.config.uploadsDir;
    // A planted symlink with a name the generator could have made, one to a directory, a dotfile,
    // and a directory with a stored-looking name.
    const planted = `${'a'.repeat(32)}.txt`;
    await symlink(path.join(outside, 'secret.txt'), path.join(dir, planted));
    await symlink(outside, path.join(dir, 'b'.repeat(32)));
    await writeFile(path.join(dir, '.hidden'), 'hidden');
    await mkdir(path.join(dir, 'c'.repeat(32)));
    const secret = path.join(outside, 'secret.txt');
    const attempts = [
      `/@/${planted}`,
      `/@/${'b'.repeat(32)}/secret.txt`,
      `/@/${'c'.repeat(32)}`,
      '/@/.hidden',
      '/@/%2ehidden',
      `/@/..%2f${path.basename(outside)}%2fsecret.txt`,
      `/@/..%2F..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd`,
      '/@/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '/@/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      '/@/..%5c..%5c..%5cetc%5cpasswd',
      '/@/..\\..\\..\\etc\\passwd',
      '/@/../../../../etc/passwd',
      `/@//${secret.slice(1)}`,
      `/@/${encodeURIComponent(secret)}`,
      `/@/${secret}`,
      '/@/%00',
      `/@/${text.filename}%00.txt`,
      `/@/${text.filename}/`,
      `/@/${text.filename}/.`,
      `/@/./${text.filename}`,
      `/@/${text.filename.toUpperCase()}`,
      '/@/',
    ];
    for (const attempt of attempts) {
      const response = await rawRequest(open.url, { path: attempt });
      expect([attempt, response.status]).toEqual([attempt, 404]);
      const body = response.json() as ErrorBody;
      expect([attempt, body.success, typeof body.code, typeof body.message]).toEqual([
        attempt,
        false,
        'string',
        'string',
      ]);
      expect(response.body.toString()).not.toContain('top secret');
      expect(response.body.toString()).not.toContain('root:');
    }
    // The genuine file still answers.
    expect((await rawRequest(open.url, { path: `/@/${text.filename}` })).status).toBe(200);
  });
});

describe('auth mode', () => {
  let secured: TestGateway;
  let token: string;

  beforeAll(async () => {
    secured = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: randomBytes(32).toString('hex'),
    });
    const credentials = { email: 'uploader@example.com', password: 'correct horse battery' };
    const register = await fetch(`${secured.url}/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(credentials),
    });
    expect(register.status).toBe(200);
    const login = await fetch(`${secured.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(credentials),
    });
    token = ((await login.json()) as { token: string }).token;
  });

  afterAll(async () => {
    await secured?.close();
  });

  test('both routes need a token: 401 Access Denied, nothing stored', async () => {
    const before = await listing(secured);
    const upload_ = await fetch(`${secured.url}/upload`, {
      method: 'POST',
      body: form([{ name: 'a.txt', data: 'a' }]),
    });
    expect(upload_.status).toBe(401);
    expect(upload_.headers.get('www-authenticate')).toBe('Bearer');
    expect(((await upload_.json()) as ErrorBody).message).toBe('Access Denied');
    expect(await listing(secured)).toEqual(before);

    const file = await fetch(`${secured.url}/@/${'0'.repeat(32)}.txt`);
    expect(file.status).toBe(401);
    expect(((await file.json()) as ErrorBody).message).toBe('Access Denied');
  });

  /** Uploads one text file with the token and gives back its record. */
  async function uploadText(gateway: TestGateway, bearer: string, data: string) {
    const response = await fetch(`${gateway.url}/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}` },
      body: form([{ name: 'private.txt', data, type: 'text/plain' }]),
    });
    expect(response.status).toBe(200);
    const [record] = ((await response.json()) as UploadAnswer).data;
    return record as NonNullable<typeof record>;
  }

  async function expectDenied(url: string): Promise<void> {
    const response = await fetch(url);
    expect([
      response.status,
      response.headers.get('www-authenticate'),
      await response.json(),
    ]).toEqual([
      401,
      'Bearer',
      { success: false, message: 'Access Denied', code: 'ACCESS_DENIED' },
    ]);
  }

  test('accessURL is a signed link: it opens the file without a header until it expires', async () => {
    const before = Math.floor(Date.now() / 1000);
    const record = await uploadText(secured, token, 'for members');
    const match = new RegExp(
      `^${secured.url}/@/(${record.filename})\\?exp=(\\d+)&sig=([A-Za-z0-9_-]{43})$`,
    ).exec(record.accessURL);
    expect(match).not.toBeNull();
    const exp = Number(match?.[2]);
    // --file-url-ttl: 1 h by default.
    expect(exp - before).toBeGreaterThanOrEqual(3600);
    expect(exp - before).toBeLessThanOrEqual(3602);

    const linked = await fetch(record.accessURL);
    expect(linked.status).toBe(200);
    expect(await linked.text()).toBe('for members');
    const range = await fetch(record.accessURL, { headers: { range: 'bytes=4-10' } });
    expect([range.status, await range.text()]).toEqual([206, 'members']);

    // The plain path: a Bearer token still works, nothing else does.
    const plain = `${secured.url}/@/${record.filename}`;
    const withToken = await fetch(plain, { headers: { authorization: `Bearer ${token}` } });
    expect([withToken.status, await withToken.text()]).toEqual([200, 'for members']);
    await expectDenied(plain);
  });

  test('an edited, borrowed or expired link is 401 like a missing token', async () => {
    const record = await uploadText(secured, token, 'one');
    const other = await uploadText(secured, token, 'two');
    const url = new URL(record.accessURL);
    const exp = url.searchParams.get('exp') as string;
    const sig = url.searchParams.get('sig') as string;
    const flipped = `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`;
    const base = `${secured.url}/@/${record.filename}`;
    for (const query of [
      `?exp=${exp}&sig=${flipped}`,
      `?exp=${Number(exp) + 3600}&sig=${sig}`,
      `?exp=${exp}`,
      `?sig=${sig}`,
      `?exp=${exp}&sig=`,
      `?exp=${exp}&sig=${sig}x`,
      `?exp=-1&sig=${sig}`,
    ]) {
      await expectDenied(`${base}${query}`);
    }
    // Another file's link does not open this one.
    await expectDenied(`${base}${new URL(other.accessURL).search}`);
    // Past its exp.
    const realNow = Date.now;
    Date.now = () => realNow() + 3601 * 1000;
    try {
      await expectDenied(record.accessURL);
    } finally {
      Date.now = realNow;
    }
    expect((await fetch(record.accessURL)).status).toBe(200);
  });

  test('--file-url-ttl sets how long a link lasts', async () => {
    const short = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: secured.config.jwtSecret,
      fileUrlTtlSeconds: 60,
    });
    try {
      const before = Math.floor(Date.now() / 1000);
      const record = await uploadText(short, token, 'short');
      const exp = Number(new URL(record.accessURL).searchParams.get('exp'));
      expect(exp - before).toBeGreaterThanOrEqual(60);
      expect(exp - before).toBeLessThanOrEqual(62);
      const linked = await fetch(record.accessURL);
      expect([linked.status, await linked.text()]).toEqual([200, 'short']);
      // Another gateway with the same secret takes the link too: past the guard, it is 404
      // there only because the file is in this gateway's uploads directory, not that one's.
      const elsewhere = new URL(record.accessURL);
      const response = await fetch(`${secured.url}${elsewhere.pathname}${elsewhere.search}`);
      expect([response.status, ((await response.json()) as ErrorBody).code]).toEqual([
        404,
        'FILE_NOT_FOUND',
      ]);
    } finally {
      await short.close();
    }
  });

  test('a policy: a link is made only for an uploader whose role may download, and opens for anyone', async () => {
    const policyFile = path.join(
      await mkdtemp(path.join(os.tmpdir(), 'tablegate-upload-policy-')),
      'policy.json',
    );
    await writeFile(
      policyFile,
      JSON.stringify({
        roles: {
          user: { files: { upload: true, download: true } },
          dropbox: { files: { upload: true } },
        },
      }),
    );
    const guarded = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: secured.config.jwtSecret,
      policyFile,
    });
    try {
      // `token` is a `user`'s: that role may download, so its link opens without a token,
      // although `anonymous` may not download.
      const record = await uploadText(guarded, token, 'shared');
      expect(record.accessURL).toContain('?exp=');
      const linked = await fetch(record.accessURL);
      expect([linked.status, await linked.text()]).toEqual([200, 'shared']);
      await expectDenied(`${guarded.url}/@/${record.filename}`);

      // A role that may upload but not download gets the plain URL: a link would give more.
      await db.admin.query(
        "UPDATE users_created_by_tablegate SET role = 'dropbox' WHERE email = 'uploader@example.com'",
      );
      const login = await fetch(`${guarded.url}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'uploader@example.com', password: 'correct horse battery' }),
      });
      const dropboxToken = ((await login.json()) as { token: string }).token;
      const dropped = await uploadText(guarded, dropboxToken, 'dropped');
      expect(dropped.accessURL).toBe(`${guarded.url}/@/${dropped.filename}`);
      const refused = await fetch(dropped.accessURL, {
        headers: { authorization: `Bearer ${dropboxToken}` },
      });
      expect(refused.status).toBe(403);
      await refused.arrayBuffer();
    } finally {
      await db.admin.query(
        "UPDATE users_created_by_tablegate SET role = 'user' WHERE email = 'uploader@example.com'",
      );
      await guarded.close();
      await rm(path.dirname(policyFile), { recursive: true, force: true });
    }
  });

  test('multipart parsing is scoped to /upload: other routes still accept only JSON', async () => {
    const response = await fetch(`${secured.url}/auth/login`, {
      method: 'POST',
      body: form([{ name: 'a.txt', data: 'a' }]),
    });
    expect(response.status).toBe(415);
    expectError(await response.json(), 'UNSUPPORTED_MEDIA_TYPE');
  });
});
