import { describe, expect, test } from '@jest/globals';
import Fastify from 'fastify';
import { RouteMethods, tableActionMethods } from '../../../src/http/allowed-methods.js';

describe('the methods a table path takes, by its action', () => {
  test.each<[string, readonly string[]]>([
    ['/table/t/read', ['GET', 'HEAD']],
    ['/table/t/read(id,1)', ['GET', 'HEAD']],
    ['/table/t/create', ['POST']],
    ['/table/odd%20names/update(%22zip%20code%22,1)', ['PUT']],
    ['/table/t/delete(id,1)', ['DELETE']],
    ['/table/t/upsert(id,1)', []],
    ['/table/t/createx', []],
    ['/table/t', []],
    ['/table/t/read/more', []],
  ])('%s → %j', (path, methods) => {
    expect(tableActionMethods(path)).toEqual(methods);
  });
});

describe('RouteMethods', () => {
  test('every registered route counts, patterns and wildcards included; CORS preflights do not', async () => {
    const app = Fastify();
    const routes = new RouteMethods();
    routes.watch(app);
    app.get('/health', async () => 'ok');
    app.post('/auth/login', async () => 'ok');
    app.get('/@/:file', async () => 'ok');
    app.get('/docs/*', async () => 'ok');
    app.options('*', async () => 'ok');
    await app.ready();
    expect(routes.allowed('/health')).toEqual(['GET', 'HEAD']);
    expect(routes.allowed('/auth/login')).toEqual(['POST']);
    expect(routes.allowed('/@/abc.png')).toEqual(['GET', 'HEAD']);
    expect(routes.allowed('/docs/static/index.css')).toEqual(['GET', 'HEAD']);
    expect(routes.allowed('/nothing')).toEqual([]);
    expect(routes.allowed('/table/t/create')).toEqual(['POST']);
    expect(routes.refusal('DELETE', '/health?x=1')).toMatchObject({
      status: 405,
      code: 'METHOD_NOT_ALLOWED',
      headers: { Allow: 'GET, HEAD' },
    });
    expect(routes.refusal('GET', '/nothing')).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    // A method the path takes but no route answered (a bad action segment): 404 as before.
    expect(routes.refusal('GET', '/health')).toMatchObject({ status: 404 });
    await app.close();
  });
});
