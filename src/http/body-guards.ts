/**
 * Bounds on JSON request bodies beyond their size (Fastify's bodyLimit): how deep they nest.
 * A 10 KB body can nest arrays 5,000 deep, and code that walks values recursively (JSON.stringify
 * of a JSON column's value) would overflow the stack: 500 instead of 400 (issue 13, item 5).
 */
import type { FastifyInstance } from 'fastify';
import { bodyTooDeep } from '../errors.js';

/**
 * Levels of arrays and objects in a whole body. A create body is an array of row objects, so a
 * JSON column's value may nest 62 more levels: more than MariaDB's JSON functions accept (32;
 * MySQL: 100).
 */
export const MAX_BODY_DEPTH = 64;

/** True when `value` nests arrays/objects deeper than `limit`; iterative, so any depth is safe. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [current, depth] = item;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

export function registerBodyGuards(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    if (nestsDeeperThan(request.body, MAX_BODY_DEPTH)) throw bodyTooDeep(MAX_BODY_DEPTH);
  });
}
