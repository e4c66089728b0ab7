/**
 * `GET /openapi.json`, the OpenAPI 3.1 description of the live schema (openapi/document.ts), built
 * again whenever the schema cache was re-read; and `GET /docs`, Swagger UI over it, served from
 * the files inside @fastify/swagger-ui (nothing is fetched from elsewhere).
 *
 * @fastify/swagger-ui needs @fastify/swagger registered and serves `fastify.swagger()` at
 * /docs/json; a static document there could not follow the schema, so its transformSpecification
 * answers with the live description instead. In auth mode the page and its assets need no token
 * (auth/guard.ts), but /openapi.json and /docs/json do: the page starts from the login description
 * and loads the full one with the user's token (docs-ui.ts).
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestLog } from '../log.js';
import {
  buildLoginDocument,
  buildOpenApiDocument,
  type OpenApiDocument,
} from '../openapi/document.js';
import { documentView } from '../policy/document-view.js';
import type { Services } from '../services.js';
import { VERSION } from '../version.js';
import { tablegateAuthPlugin } from './docs-ui.js';
import { JSON_TYPE } from './json-rows.js';

export const DOCS_PREFIX = '/docs';

interface Described {
  readonly version: number;
  readonly document: OpenApiDocument;
  readonly text: string;
}

export function docsRoutes(app: FastifyInstance, { config, schema, policy, log }: Services): void {
  const version = VERSION;
  /** Per role under a policy (the key '' without one). */
  const cache = new Map<string, Described>();

  /** The description of the schema as it is now (re-read at most once a second), as this caller may use it. */
  async function current(request: FastifyRequest): Promise<Described> {
    try {
      await schema.refreshIfStale();
    } catch (error) {
      // MySQL is down: the description of the schema read before is still right.
      requestLog(log, request).warn(
        { err: error },
        'cannot re-read the schema for the API description',
      );
    }
    return described(request);
  }

  /** The cached description for this caller, built again when the schema changed. */
  function described(request: FastifyRequest): Described {
    const role = request.access?.role ?? '';
    let entry = cache.get(role);
    if (entry?.version !== schema.version) {
      const view = policy && request.access ? documentView(policy, role) : undefined;
      const document = buildOpenApiDocument(schema.all(), config, version, view);
      entry = { version: schema.version, document, text: JSON.stringify(document) };
      cache.set(role, entry);
    }
    return entry;
  }

  app.get('/openapi.json', async (request, reply) => {
    const { text } = await current(request);
    return reply.type(JSON_TYPE).send(text);
  });

  const auth = config.mode === 'auth';
  app.register(async (scope) => {
    // Never served: swagger-ui's /docs/json answers with the live description (below).
    await scope.register(swagger, {
      mode: 'static',
      specification: {
        document: { openapi: '3.1.0', info: { title: 'tablegate', version }, paths: {} },
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
          ? { spec: buildLoginDocument(config, version), plugins: [tablegateAuthPlugin] }
          : {}),
      },
      uiHooks: {
        preHandler: async (request: FastifyRequest) => {
          const route = request.routeOptions.url ?? '';
          if (route.endsWith('/json') || route.endsWith('/yaml')) await current(request);
        },
      },
      transformSpecificationClone: false,
      // The preHandler above has brought the cache up to date.
      transformSpecification: (_document: unknown, request: FastifyRequest) =>
        described(request).document,
    });
  });
}
