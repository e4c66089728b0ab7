/**
 * SAP Cloud SDK for JavaScript against the gateway (docs/odata.md), as an SAP developer uses it:
 * `@sap-cloud-sdk/generator` generates a typed client from the `$metadata` the gateway serves (the
 * clerk's, saved to an .edmx file), transpiles it with its own `--transpile` (tsc through
 * ts-morph, ES modules), and the generated client runs on `@sap-cloud-sdk/odata-v4`: getAll with
 * filter, orderBy, skip and top, count, getByKey, create, update (PATCH)
 * and delete, in open mode and as the clerk with a bearer token. The client is generated once per
 * run (about 20 s of CPU).
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  CASES,
  MODES,
  PRODUCTS,
  productRow,
  recorded,
  type Target,
  targetOf,
  useConsumerFixture,
} from '../helpers/odata-consumers.js';

const require = createRequire(import.meta.url);
// biome-ignore lint/suspicious/noExplicitAny: the generated client's types are made at run time
type Any = any;
const { BigNumber } = require('bignumber.js') as { BigNumber: Any };
const moment = require('moment') as Any;
const GENERATOR = require.resolve('@sap-cloud-sdk/generator/dist/cli.js');

const fixture = useConsumerFixture();
let work: string;
/** The generated `productsApi` and the SDK's `desc`/`asc`. */
let api: Any;
/** The generated service: its `batch` and `changeset` besides the APIs. */
let client: Any;
let sdk: Any;
let generatorLog = '';
const sdkLog = (line: string) => {
  generatorLog += `${line}\n`;
};

function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d) => (generatorLog += d));
    child.stderr.on('data', (d) => (generatorLog += d));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`generator exited ${code}:\n${generatorLog}`)),
    );
  });
}

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'tablegate-sap-client-'));
  // The generated code imports @sap-cloud-sdk/odata-v4, bignumber.js and moment: this
  // checkout's node_modules, as an app's own would be.
  await symlink(path.resolve('node_modules'), path.join(work, 'node_modules'), 'dir');
  const clerk = fixture.targets[1] as Target;
  const served = await fetch(`${clerk.direct}/odata/$metadata`, { headers: clerk.headers });
  if (served.status !== 200) throw new Error(`$metadata: ${served.status} ${await served.text()}`);
  await mkdir(path.join(work, 'edmx'));
  await writeFile(path.join(work, 'edmx', 'tablegate.edmx'), await served.text());
  await writeFile(path.join(work, 'package.json'), '{"type": "module"}\n');
  // The service's base path, which $metadata cannot say: /odata. The generator keys a service's
  // options by its file's path relative to where it runs.
  await writeFile(
    path.join(work, 'options-per-service.json'),
    JSON.stringify({
      'edmx/tablegate.edmx': {
        packageName: 'tablegate',
        directoryName: 'tablegate',
        basePath: '/odata',
      },
    }),
  );
  await run(
    process.execPath,
    [
      GENERATOR,
      '--input',
      'edmx',
      '--outputDir',
      'client',
      '--optionsPerService',
      'options-per-service.json',
      '--transpile',
      '--generateESM',
    ],
    work,
  );
  const [service] = await readdir(path.join(work, 'client'));
  // service.js exports the service function alone (the entity classes are in their own files).
  const generated = await import(
    pathToFileURL(path.join(work, 'client', String(service), 'service.js')).href
  );
  const [factory] = Object.values(generated) as (() => Any)[];
  client = (factory as () => Any)();
  api = client.productsApi;
  sdkLog(`service ${service}: ${Object.keys(generated).join(', ')}`);
  sdk = require('@sap-cloud-sdk/odata-v4');
}, 240_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** The SDK's destination for a target: the gateway's origin (the client knows /odata) and who calls. */
function destination(target: Target) {
  const url = new URL(target.service).origin;
  // Basic: the SDK's own BasicAuthentication destination makes the header.
  if (target.credentials) {
    const { email: username, password } = target.credentials;
    return { url, authentication: 'BasicAuthentication', username, password };
  }
  return { url, headers: { ...target.headers } };
}

function ids(products: Any[]): number[] {
  return products.map((p) => p.id);
}

describe.each(MODES)('the generated client, %s', (mode) => {
  const target = () => targetOf(fixture, mode);

  test('getAll: every product with typed values (BigNumber price, moment added_at)', async () => {
    const t = target();
    await recorded(t, async () => {
      const all = await api.requestBuilder().getAll().execute(destination(t));
      expect(ids(all)).toEqual(PRODUCTS.map((p) => p.id));
      const third = all[2];
      expect(third.name).toBe('Product 03');
      expect(BigNumber.isBigNumber(third.price)).toBe(true);
      expect(third.price.toString()).toBe('3.75');
      expect(third.zipX0020Code).toBe('10003');
      expect(moment.isMoment(third.addedAt)).toBe(true);
      expect(third.addedAt.toISOString()).toBe('2026-01-03T08:30:00.000Z');
    });
  });

  test('getAll with filter', async () => {
    const t = target();
    await recorded(t, async () => {
      const filtered = await api
        .requestBuilder()
        .getAll()
        .filter(api.schema.PRICE.greaterThan(new BigNumber(10)))
        .execute(destination(t));
      expect(ids(filtered)).toEqual(CASES.filtered);
      const byZip = await api
        .requestBuilder()
        .getAll()
        .filter(api.schema.ZIP_X_0020_CODE.equals('10005'))
        .execute(destination(t));
      expect(ids(byZip)).toEqual(CASES.byZip);
    });
  });

  test('getAll with orderBy, skip and top', async () => {
    const t = target();
    await recorded(t, async () => {
      const page = await api
        .requestBuilder()
        .getAll()
        .orderBy(sdk.desc(api.schema.PRICE))
        .skip(2)
        .top(3)
        .execute(destination(t));
      expect(ids(page)).toEqual(CASES.paged);
    });
  });

  test('count', async () => {
    const t = target();
    await recorded(t, async () => {
      const count = await api
        .requestBuilder()
        .getAll()
        .filter(api.schema.PRICE.greaterThan(new BigNumber(10)))
        .count()
        .execute(destination(t));
      expect(count).toBe(CASES.count);
    });
  });

  test('getByKey', async () => {
    const t = target();
    await recorded(t, async () => {
      const one = await api.requestBuilder().getByKey(7).execute(destination(t));
      expect(one.id).toBe(7);
      expect(one.price.toString()).toBe('8.75');
      expect(one.zipX0020Code).toBe('10007');
      await expect(api.requestBuilder().getByKey(999).execute(destination(t))).rejects.toThrow();
      const missing = t.proxy.exchanges.at(-1);
      expect(missing?.status).toBe(404);
      expect(JSON.parse(missing?.responseBody ?? '{}')).toEqual({
        error: { code: expect.any(String), message: expect.any(String) },
      });
    });
  });

  test('create, update (PATCH), delete', async () => {
    const t = target();
    await recorded(t, async () => {
      const draft = api
        .entityBuilder()
        .name(`SAP ${mode}`)
        .price(new BigNumber('9.99'))
        .zipX0020Code('99999')
        .addedAt(moment.utc('2026-03-04T05:06:07Z'))
        .build();
      const created = await api.requestBuilder().create(draft).execute(destination(t));
      expect(created.id).toBeGreaterThan(12);
      expect(created.price.toString()).toBe('9.99');
      expect(await productRow(fixture.db, created.id)).toEqual(
        expect.objectContaining({
          name: `SAP ${mode}`,
          price: '9.99',
          zip: '99999',
          added_at: '2026-03-04 05:06:07',
        }),
      );

      created.price = new BigNumber('19.99');
      await api.requestBuilder().update(created).execute(destination(t));
      const patch = t.proxy.exchanges.find((e) => e.method === 'PATCH');
      // Only what changed, Edm.Decimal as a JSON number; 204, OData's default answer.
      expect(JSON.parse(patch?.requestBody ?? '{}')).toEqual({ price: 19.99 });
      expect(patch?.status).toBe(204);
      expect((await productRow(fixture.db, created.id))?.price).toBe('19.99');

      const fresh = await api.requestBuilder().getByKey(created.id).execute(destination(t));
      await api.requestBuilder().delete(fresh).execute(destination(t));
      const deletion = t.proxy.exchanges.find((e) => e.method === 'DELETE');
      expect(deletion?.status).toBe(204);
      expect(await productRow(fixture.db, created.id)).toBeUndefined();
    });
  });

  test('batch: a read and a change set (multipart/mixed $batch)', async () => {
    const t = target();
    await recorded(t, async () => {
      const draft = api
        .entityBuilder()
        .name(`SAP batch ${mode}`)
        .price(new BigNumber('3.30'))
        .addedAt(moment.utc('2026-08-09T10:11:12Z'))
        .build();
      const [read, writes] = await client
        .batch(
          api
            .requestBuilder()
            .getAll()
            .filter(api.schema.PRICE.greaterThan(new BigNumber(10))),
          client.changeset(api.requestBuilder().create(draft)),
        )
        .execute(destination(t));
      expect(read.isSuccess()).toBe(true);
      expect(ids(read.as(api))).toEqual(CASES.filtered);
      expect(writes.isWriteResponses()).toBe(true);
      const [created] = writes.responses;
      expect(created.httpCode).toBe(201);
      const id = created.as(api).id;
      expect((await productRow(fixture.db, id))?.name).toBe(`SAP batch ${mode}`);
      const sent = t.proxy.exchanges.find((e) => e.url.endsWith('$batch'));
      expect(sent?.requestHeaders['content-type']).toMatch(/^multipart\/mixed; ?boundary=/);
    });
  });
});
