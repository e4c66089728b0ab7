/**
 * A route says what it is where it is declared (http/route-gate.ts): one that declares nothing
 * stops the server before it listens, whether it came from our code or a plugin's scope.
 */
import { describe, expect, test } from '@jest/globals';
import Fastify from 'fastify';
import { gated, RouteGates } from '../../../src/http/route-gate.js';

function app() {
  const instance = Fastify();
  new RouteGates().watch(instance);
  return instance;
}

describe('RouteGates', () => {
  test('a server whose routes all declare a gate starts, and lists them with their HEADs', async () => {
    const instance = app();
    instance.get('/a', gated({ kind: 'public' }), async () => 'a');
    instance.post('/t/:table', gated({ kind: 'table', action: 'create' }), async () => 't');
    await instance.ready();
    expect(instance.routeGates.list()).toEqual([
      { route: 'GET /a', gate: { kind: 'public' } },
      { route: 'HEAD /a', gate: { kind: 'public' } },
      { route: 'POST /t/:table', gate: { kind: 'table', action: 'create' } },
    ]);
    await instance.close();
  });

  test('a route that declares nothing is refused: the server does not start', async () => {
    const instance = app();
    instance.get('/a', gated({ kind: 'public' }), async () => 'a');
    instance.register(async (scope) => {
      scope.post('/forgotten', async () => 'f');
    });
    await expect(instance.ready()).rejects.toThrow('routes without a gate: POST /forgotten');
  });

  test("a plugin's routes are declared by an onRoute hook of its scope", async () => {
    const instance = app();
    instance.register(async (scope) => {
      scope.addHook('onRoute', (route) => {
        route.config = { ...route.config, gate: { kind: 'description' } };
      });
      scope.get('/plugin/json', async () => '{}');
    });
    await instance.ready();
    expect(instance.routeGates.list()).toEqual([
      { route: 'GET /plugin/json', gate: { kind: 'description' } },
      { route: 'HEAD /plugin/json', gate: { kind: 'description' } },
    ]);
    await instance.close();
  });
});
