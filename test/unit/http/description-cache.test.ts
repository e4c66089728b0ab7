/**
 * http/description-cache.ts: one build per view and schema version however many ask at once,
 * the bytes of every coding and format, the ETag, a failed build tried again, and a long build
 * that leaves the event loop free for other callbacks.
 */
import { createHash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';
import { DescriptionCache, type DocumentSteps } from '../../../src/http/description-cache.js';
import type { OpenApiDocument } from '../../../src/http/openapi-document.js';

const DOCUMENT: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 'tablegate', version: '1' },
  paths: { '/a': { get: { summary: 'ä\nb' } }, '/b': { put: { summary: 'x'.repeat(200) } } },
};

/** Steps that give `document` after `count` pauses; counts its builds. */
function counted(document: OpenApiDocument, count = 3) {
  const made = { builds: 0 };
  const steps: DocumentSteps = function* () {
    made.builds++;
    for (let i = 0; i < count; i++) yield;
    return document;
  };
  return { made, factory: () => steps };
}

describe('DescriptionCache', () => {
  test('concurrent requests for one view and version share one build; a new version builds again', async () => {
    const cache = new DescriptionCache();
    const { made, factory } = counted(DOCUMENT);
    const [a, b, c] = await Promise.all([
      cache.get('user', 1, 'json', factory),
      cache.get('user', 1, 'json', factory),
      cache.get('user', 1, 'json', factory),
    ]);
    expect(made.builds).toBe(1);
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(await cache.get('user', 1, 'json', factory)).toBe(a);
    expect(made.builds).toBe(1);
    await cache.get('admin', 1, 'json', factory);
    expect(made.builds).toBe(2);
    const next = await cache.get('user', 2, 'json', factory);
    expect(made.builds).toBe(3);
    expect(next).not.toBe(a);
  });

  test('every coding carries the same bytes, named by their hash', async () => {
    const { factory } = counted(DOCUMENT);
    const json = await new DescriptionCache().get('', 1, 'json', factory);
    const text = JSON.stringify(DOCUMENT);
    expect(json.type).toBe('application/json; charset=utf-8');
    expect(json.identity.toString()).toBe(text);
    expect(gunzipSync(json.gzip).toString()).toBe(text);
    expect(brotliDecompressSync(json.br).toString()).toBe(text);
    expect(json.etag).toBe(`W/"${createHash('sha256').update(text).digest('base64url')}"`);
  });

  test('YAML is made from the same view when asked for, with an ETag of its own', async () => {
    const cache = new DescriptionCache();
    const { made, factory } = counted(DOCUMENT);
    const json = await cache.get('', 1, 'json', factory);
    const yaml = await cache.get('', 1, 'yaml', factory);
    expect(yaml.type).toBe('application/x-yaml');
    expect(parse(yaml.identity.toString())).toEqual(DOCUMENT);
    expect(parse(gunzipSync(yaml.gzip).toString())).toEqual(DOCUMENT);
    expect(yaml.etag).not.toBe(json.etag);
    // Both formats come from the view's one set of steps (the factory ran once), run once each.
    expect(made.builds).toBe(2);
  });

  test('a build that fails is not kept: the next request builds again', async () => {
    const cache = new DescriptionCache();
    let fail = true;
    const steps: DocumentSteps = function* () {
      yield;
      if (fail) throw new Error('broken');
      return DOCUMENT;
    };
    await expect(cache.get('', 1, 'json', () => steps)).rejects.toThrow('broken');
    fail = false;
    const made = await cache.get('', 1, 'json', () => steps);
    expect(made.identity.toString()).toBe(JSON.stringify(DOCUMENT));
  });

  test('a long build leaves the event loop free between slices', async () => {
    // 100 steps, each busy for longer than a slice (DESCRIPTION_SLICE_MS, 2 ms): run at once
    // they would hold every other callback until the end. Between any two of them, another
    // callback must have run. (How long the loop was held is measured by
    // bench/description-slices.mjs, not here: a loaded machine stretches it.)
    let turns = 0;
    let building = true;
    const turn = () => {
      turns++;
      if (building) setImmediate(turn);
    };
    setImmediate(turn);
    const seen: number[] = [];
    const steps: DocumentSteps = function* () {
      for (let i = 0; i < 100; i++) {
        seen.push(turns);
        const until = performance.now() + 4;
        while (performance.now() < until) {
          // A step of the build that holds the thread.
        }
        yield;
      }
      return DOCUMENT;
    };
    await new DescriptionCache().get('', 1, 'json', () => steps);
    building = false;
    expect(seen).toHaveLength(100);
    const heldThrough = seen.flatMap((n, i) => (i > 0 && n <= (seen[i - 1] as number) ? [i] : []));
    expect(heldThrough).toEqual([]);
  });
});
