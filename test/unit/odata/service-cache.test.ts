/**
 * `$metadata` as served (odata/service-cache.ts): the exact bytes and ETag of the XML and JSON
 * documents of the fixture schemas (the shop, the fixtures' odd names, temporal and spatial
 * columns, the routines), pinned in metadata-bytes/ as the first sliced build made them; and
 * one build of the model and of each document for any number of requests at once.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import { FULL_VIEW, modelSteps } from '../../../src/odata/model.js';
import { ServiceCache } from '../../../src/odata/service-cache.js';
import { ROUTINES } from '../fixtures/routines.js';
import { events, order, places } from '../fixtures/schema.js';
import { SHOP } from '../fixtures/shop.js';

const TABLES = [...SHOP, order, events, places];
const pinned = (format: 'xml' | 'json') =>
  readFileSync(new URL(`metadata-bytes/shop.${format}.txt`, import.meta.url));
const etagOf = (bytes: Buffer) => `W/"${createHash('sha256').update(bytes).digest('base64url')}"`;

/** The model's steps, counting how often a build starts. */
function counted() {
  const starts = { count: 0 };
  const steps = () => {
    starts.count++;
    return modelSteps(TABLES, ROUTINES, FULL_VIEW);
  };
  return { starts, steps };
}

describe('$metadata as served', () => {
  test.each(['xml', 'json'] as const)('%s: the pinned bytes and their ETag', async (format) => {
    const { steps } = counted();
    const made = await new ServiceCache().metadata('[true,null]', 1, steps, format);
    const expected = pinned(format);
    expect(made.bytes.toString('utf8')).toBe(expected.toString('utf8'));
    expect(made.bytes.equals(expected)).toBe(true);
    expect(made.etag).toBe(etagOf(expected));
  });

  test('requests at once share one model and one document per format', async () => {
    const cache = new ServiceCache();
    const { starts, steps } = counted();
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => cache.metadata('[true,null]', 1, steps, 'xml')),
      ...Array.from({ length: 5 }, () => cache.metadata('[true,null]', 1, steps, 'json')),
      cache.model('[true,null]', 1, steps),
    ]);
    expect(starts.count).toBe(1);
    const [xml, ...rest] = answers.slice(0, 5);
    for (const other of rest) expect(other).toBe(xml);
    const [json, ...more] = answers.slice(5, 10);
    for (const other of more) expect(other).toBe(json);
    // Kept: asked again for the same version, nothing is built.
    await cache.metadata('[true,null]', 1, steps, 'xml');
    expect(starts.count).toBe(1);
    // A new schema version, or another view, builds again.
    await cache.metadata('[true,null]', 2, steps, 'xml');
    await cache.metadata('[true,"clerk"]', 2, steps, 'json');
    expect(starts.count).toBe(3);
  });
});
