/**
 * `GET /openapi.json`, the OpenAPI 3.1 description of the live schema as the caller's role may
 * use it (http/openapi-document.ts, policy/document-view.ts); and `GET /docs`, Swagger UI over it,
 * served from the files inside @fastify/swagger-ui (nothing is fetched from elsewhere).
 *
 * Every request asks the schema cache whether the schema changed (one cheap statement at most
 * once per refresh interval); the description itself comes from description-cache.ts, built once
 * per view and schema version away from other requests' way, compressed as the client accepts
 * (br, gzip) with an ETag and 304 for an unchanged one.
 *
 * @fastify/swagger-ui needs @fastify/swagger registered and serves its document at /docs/json
 * and /docs/yaml; a preHandler answers those with the same live description instead. In auth
 * mode the page and its assets need no token (swaggerUiGate), but /openapi.json and /docs/json
 * do: the page starts from the login description and loads the full one with the user's token
 * (docs-ui.ts).
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allRoutines } from '../db/routines.js';
import { requestLog } from '../log.js';
import { documentView } from '../policy/document-view.js';
import { noneMatchHolds, parseEntityTags } from '../query/entity-tags.js';
import type { Services } from '../services.js';
import { VERSION } from '../version.js';
import { DescriptionCache, type Format } from './description-cache.js';
import { DOCS_PREFIX } from './docs-prefix.js';
import { tablegateAuthPlugin, tablegatePathsPlugin } from './docs-ui.js';
import { chooseCoding, vary } from './negotiate.js';
import { buildLoginDocument, documentSteps } from './openapi-document.js';
import { gated, type RouteGate } from './route-gate.js';

/**
 * What each of Swagger UI's routes is: its copies of the description need what /openapi.json
 * needs; the page and its static assets need no token (docs/auth.md); anything else a token.
 */
function swaggerUiGate(url: string): RouteGate {
  if (url === `${DOCS_PREFIX}/json` || url === `${DOCS_PREFIX}/yaml`)
    return { kind: 'description' };
  const page = url === DOCS_PREFIX || url === `${DOCS_PREFIX}/`;
  return page || url.startsWith(`${DOCS_PREFIX}/static/`)
    ? { kind: 'public' }
    : { kind: 'signed-in' };
}

export function docsRoutes(app: FastifyInstance, { config, schema, policy, log }: Services): void {
  const auth = config.mode === 'auth';
  const cache = new DescriptionCache();
  // The answer depends on the token's role in auth mode; caches must ask again (ETag) each time.
  const varies = auth ? ['Accept-Encoding', 'Authorization'] : ['Accept-Encoding'];
  const cacheControl = auth ? 'private, no-cache' : 'no-cache';

  async function send(request: FastifyRequest, reply: FastifyReply, format: Format) {
    try {
      await schema.refreshIfChanged();
    } catch (error) {
      // MySQL is down: the description of the schema read before is still right.
      requestLog(log, request).warn(
        { err: error },
        'cannot re-read the schema for the API description',
      );
    }
    // A view is the role's grants (not its users'), and whether the caller has a token. Roles
    // the policy does not name are granted nothing: they share one view, so the cache holds
    // at most two per role of the policy (and two more).
    const role = request.access?.role ?? '';
    const signedIn = !auth || request.auth !== null;
    const named = policy === undefined || policy.roles.has(role);
    const key = JSON.stringify([signedIn, named ? role : null]);
    const description = await cache.get(key, schema.version, format, () => {
      const tables = [...schema.all()];
      const routines = allRoutines(schema.routines);
      const view =
        policy && request.access ? { ...documentView(policy, role), signedIn } : undefined;
      return () => documentSteps(tables, config, VERSION, view, routines);
    });
    vary(reply, varies);
    reply.header('ETag', description.etag).header('Cache-Control', cacheControl);
    if (noneMatchHolds(parseEntityTags(request.headers['if-none-match']), description.etag)) {
      return reply.code(304).send();
    }
    const coding = chooseCoding(request.headers['accept-encoding']);
    if (coding !== 'identity') reply.header('Content-Encoding', coding);
    return reply.type(description.type).send(description[coding]);
  }

  app.get('/openapi.json', gated({ kind: 'description' }), (request, reply) =>
    send(request, reply, 'json'),
  );

  app.register(async (scope) => {
    // The plugins below take no route options of ours: their routes are declared as they come.
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, gate: swaggerUiGate(route.url) };
    });
    // Never served: the preHandler below answers /docs/json and /docs/yaml.
    await scope.register(swagger, {
      mode: 'static',
      specification: {
        document: { openapi: '3.1.0', info: { title: 'tablegate', version: VERSION }, paths: {} },
      },
    });
    await scope.register(swaggerUi, {
      routePrefix: DOCS_PREFIX,
      theme: { title: 'tablegate API' },
      uiConfig: {
        layout: 'BaseLayout',
        docExpansion: 'list',
        defaultModelsExpandDepth: 0,
        displayRequestDuration: true,
        // Auth mode: start from what needs no token; the plugin loads the rest with one.
        ...(auth
          ? {
              spec: buildLoginDocument(config, VERSION),
              plugins: [tablegateAuthPlugin, tablegatePathsPlugin],
            }
          : { plugins: [tablegatePathsPlugin] }),
      },
      uiHooks: {
        preHandler: async (request: FastifyRequest, reply: FastifyReply) => {
          const route = request.routeOptions.url ?? '';
          const format = route.endsWith('/json') ? 'json' : route.endsWith('/yaml') ? 'yaml' : null;
          // Answered here, so the plugin's handler never runs (the hook must return the reply).
          if (format !== null) return send(request, reply, format);
        },
      },
    });
  });
}
