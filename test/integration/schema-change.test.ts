/**
 * The schema cache on a real MariaDB/MySQL (db/schema.ts, db/schema-change.ts): a re-read of an
 * unchanged schema keeps the tables it holds and its version (so plans and descriptions built
 * from them stay valid), `refreshIfChanged` reads the tables only when the fingerprint moved, and
 * the fingerprint moves for every kind of change a full read would see.
 */
import { schemaFingerprint } from '../../src/db/schema-change.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const FIXTURE = `
CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, price DECIMAL(10,2) NULL,
  data LONGTEXT NULL);
CREATE TABLE logs (id INT PRIMARY KEY, line TEXT);
`;

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  // schemaRefreshMs 0 (test/helpers/gateway.ts): every call may read.
  gw = await startTestGateway(db.name);
});
afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

const fingerprint = () => schemaFingerprint(gw.gateway.db, db.name);

test('a re-read of an unchanged schema keeps the tables and the version', async () => {
  // Relations refer to their target tables, in cycles (a self-reference): compared by name.
  await db.admin.query(
    'CREATE TABLE nodes (id INT PRIMARY KEY, up INT NULL REFERENCES nodes (id))',
  );
  await gw.gateway.schema.refresh();
  const { schema } = gw.gateway;
  const before = await schema.require('items');
  const version = schema.version;
  await schema.refresh();
  await schema.refreshIfChanged();
  expect(schema.version).toBe(version);
  expect(await schema.require('items')).toBe(before);
});

test('refreshIfChanged reads the tables only when the fingerprint moved', async () => {
  const { schema } = gw.gateway;
  const log: string[] = [];
  const database = gw.gateway.db;
  const rows = database.rows.bind(database);
  database.rows = ((query: { sql: string }) => {
    log.push(/FROM information_schema\.(\w+)/.exec(query.sql)?.[1] ?? query.sql);
    return rows(query as never);
  }) as typeof database.rows;
  try {
    await schema.refreshIfChanged();
    expect(log).toEqual(['TABLES']);
    log.length = 0;
    await db.admin.query('ALTER TABLE logs ADD COLUMN level INT NULL');
    await schema.refreshIfChanged();
    expect(log.length).toBeGreaterThan(2);
    expect((await schema.require('logs')).columns.map((c) => c.name)).toEqual([
      'id',
      'line',
      'level',
    ]);
  } finally {
    database.rows = rows;
  }
});

test('a table created while a read is under way is found by the next miss', async () => {
  const { schema } = gw.gateway;
  const database = gw.gateway.db;
  const rows = database.rows.bind(database);
  let statements = 0;
  database.rows = ((query: never) => {
    statements++;
    return rows(query);
  }) as typeof database.rows;
  try {
    await schema.refresh();
    const perRead = statements;
    // The next read answers all its statements but is held at its last one: it read the tables
    // before `late` was created.
    let reached: () => void = () => {};
    const atLast = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    statements = 0;
    database.rows = (async (query: never) => {
      const answer = await rows(query);
      if (++statements === perRead) {
        reached();
        await held;
      }
      return answer;
    }) as typeof database.rows;
    const under = schema.refresh();
    await atLast;
    database.rows = rows;
    await db.admin.query('CREATE TABLE late (id INT PRIMARY KEY)');
    const found = schema.find('late');
    release();
    await under;
    expect((await found)?.name).toBe('late');
  } finally {
    database.rows = rows;
  }
});

test.each<[string, string]>([
  ['a table', 'CREATE TABLE more (id INT)'],
  ['a view', 'CREATE VIEW cheap AS SELECT id FROM items'],
  ['a column', 'ALTER TABLE items ADD COLUMN note TEXT'],
  ['a column type', 'ALTER TABLE items MODIFY name VARCHAR(30) NOT NULL'],
  ['a default', "ALTER TABLE items ALTER name SET DEFAULT 'x'"],
  ['nullability', "ALTER TABLE items MODIFY name VARCHAR(30) NULL DEFAULT 'x'"],
  ['a primary key', 'ALTER TABLE more ADD PRIMARY KEY (id)'],
  ['a trigger', 'CREATE TRIGGER items_bi BEFORE INSERT ON items FOR EACH ROW SET NEW.price = 1'],
  ['a JSON check', 'ALTER TABLE items ADD CONSTRAINT data_json CHECK (json_valid(data))'],
  ['a foreign key', 'ALTER TABLE logs ADD COLUMN item_id INT NULL REFERENCES items (id)'],
  [
    'a self-referencing key',
    'ALTER TABLE items ADD COLUMN parent_id INT NULL REFERENCES items (id)',
  ],
  ['a column dropped', 'ALTER TABLE items DROP COLUMN note'],
  ['a table dropped', 'DROP TABLE more'],
])('%s moves the fingerprint, and the next check reads it', async (_label, statement) => {
  const { schema } = gw.gateway;
  await schema.refreshIfChanged();
  const before = await fingerprint();
  const version = schema.version;
  expect(before).not.toBeNull();
  await db.admin.query(statement);
  expect(await fingerprint()).not.toBe(before);
  await schema.refreshIfChanged();
  expect(schema.version).toBe(version + 1);
});
