/**
 * Junk after a request on the same connection (a body sent without a length, pipelined garbage):
 * the request's own answer must reach the client, not a 400 for the junk — otherwise a client is
 * told its write failed while it was committed. Found by the HTTP fuzz drill.
 */
import net from 'node:net';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(
    'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1), (2)',
  );
  gw = await startTestGateway(db.name);
});
afterAll(async () => {
  await gw.close();
  await db.drop();
});

function exchange(raw: string): Promise<string> {
  const port = Number(new URL(gw.url).port);
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(raw));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (text += chunk));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy());
  });
}

test('a DELETE followed by junk gets its own answer, then the connection closes', async () => {
  const answer = await exchange(
    'DELETE /table/t/delete(id,1) HTTP/1.1\r\nHost: localhost\r\n\r\n{"junk": [1, 2, 3]}',
  );
  expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
  expect(answer).toContain(
    '{"success":true,"message":"Data deleted successfully","affectedRows":1}',
  );
  expect(answer).not.toContain('HTTP/1.1 400');
  const [rows] = await db.admin.query('SELECT id FROM t ORDER BY id');
  expect(rows).toEqual([{ id: 2 }]);
});

test('junk on a fresh connection is still a JSON 400', async () => {
  const answer = await exchange('THIS IS NOT HTTP\r\n\r\n');
  expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
  expect(answer).toContain('"code":"MALFORMED_REQUEST"');
});
