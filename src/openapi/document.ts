/**
 * The OpenAPI 3.1 description of the gateway, assembled from the route modules' descriptions
 * (src/http/*.openapi.ts): per table and view the table operations the caller's view grants,
 * per stored routine the caller may call its operations, the other routes, shared components,
 * and in auth mode the Bearer scheme. Pure:
 * (tables, config, view) → object. `documentSteps` is the same assembly as a generator that
 * pauses after every table, so a server can build a large description between other requests.
 *
 * No description names the database: no path or parameter needs it, and a signed-in role may be
 * anyone who registered. A document is then a function of the caller's view alone.
 */
import type { RoutineInfo } from '../db/routines.js';
import type { TableInfo } from '../db/schema-types.js';
import { ERRORS, type Stage } from '../errors.js';
import { RPC_TAG } from '../http/rpc.openapi.js';
import type { JsonSchema } from './column-schema.js';
import { Components } from './components.js';
import { codesOf, ERROR_SCHEMA, errorResponses, GENERAL_ERROR_STAGES } from './error-codes.js';
import type {
  DescribedRelation,
  DescriptionContext,
  DocumentConfig,
  DocumentTableView,
  DocumentView,
  RouteOperation,
  RoutineOperation,
  TableNames,
  TableOperation,
} from './operation.js';
import { authOperations, otherRoutes, routineOperations, tableOperations } from './routes.js';

export type { DocumentConfig, DocumentTableView, DocumentView } from './operation.js';

export type OpenApiDocument = JsonSchema & { openapi: string; paths: Record<string, JsonSchema> };

const FULL_VIEW: DocumentView = {
  table: (table) => ({
    read: table.columns,
    create: table.columns,
    update: table.columns,
    delete: true,
    relations: [...table.relations.values()],
  }),
  upload: true,
  download: true,
};

export const BEARER_SCHEME = 'bearerAuth';

/** Stages that exist only under a policy. */
const POLICY_STAGES: ReadonlySet<Stage> = new Set(['policy-action', 'policy-rows']);

/** Tags of the routes that are not tables; a table of one of these names gets a tag of its own. */
const ROUTE_TAGS = ['auth', RPC_TAG, 'files', 'health', 'odata'];

/** Component keys must match ^[a-zA-Z0-9.\-_]+$ (OpenAPI 3.1 §4.8.7.1); table names need not. */
function uniqueName(wanted: string, taken: Set<string>, suffix = ''): string {
  const base = (wanted.replace(/[^A-Za-z0-9_-]/g, '_') || '_') + suffix;
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
  taken.add(name);
  return name;
}

/** What is being assembled: every route, or only those that need no token (the login page). */
interface Assembly {
  readonly config: DocumentConfig;
  readonly view: DocumentView;
  readonly underPolicy: boolean;
  readonly publicOnly: boolean;
}

/**
 * Open mode: every operation says outright that it needs no credentials (`security: []`), as
 * docs/openapi.md promises; in auth mode the document's `security` applies unless it says more.
 */
function needsNothingIn(assembly: Assembly, operation: JsonSchema): JsonSchema {
  return assembly.config.mode === 'auth' || operation.security !== undefined
    ? operation
    : { ...operation, security: [] };
}

/** The context one operation describes itself in. */
function contextFor(
  assembly: Assembly,
  components: Components,
  operation: TableOperation | RoutineOperation | RouteOperation,
  errorsByName: Map<string, JsonSchema>,
): DescriptionContext {
  const auth = assembly.config.mode === 'auth';
  const guarded = auth && !('public' in operation && operation.public);
  return {
    config: assembly.config,
    auth,
    schema: (name, schema) => components.ref('schemas', name, schema),
    shared: (name) => {
      const schema = operation.schemas?.[name];
      if (schema === undefined) throw new Error(`the operation does not declare schema ${name}`);
      return components.ref('schemas', name, schema);
    },
    parameter: (name, parameter) => components.ref('parameters', name, parameter),
    errors: (name, stages, mysql = []) => {
      // One operation name runs the same stages throughout a document: its responses are made once.
      let refs = errorsByName.get(name);
      if (refs === undefined) {
        const applying = stages.filter(
          (stage) => assembly.underPolicy || !POLICY_STAGES.has(stage),
        );
        const responses = errorResponses(guarded ? ['guard', ...applying] : applying, { mysql });
        components.ref('schemas', 'Error', ERROR_SCHEMA);
        refs = Object.fromEntries(
          Object.entries(responses).map(([status, response]) => [
            status,
            components.ref('responses', `${name}.${status}`, response),
          ]),
        );
        errorsByName.set(name, refs);
      }
      return refs;
    },
  };
}

function describeApi(config: DocumentConfig): string {
  const lines = [
    'The tables and views of the database that you may use, read live from its schema.',
    'Rows are JSON objects; reads take `$select`, `$filter`, `$orderby`, `$top`, `$skip`, `$count` and `$expand`',
    "(related rows through the database's foreign keys: each read lists its table's relations).",
    'Every error is `{"success": false, "message": …, "code": …}`.',
    `Besides each operation's own errors, any request may get ${codesOf(GENERAL_ERROR_STAGES)
      .map((code) => `\`${code}\` (${ERRORS[code].status})`)
      .join(
        ', ',
      )}: the request was not valid HTTP, too slow or too large, no route matched, or a streamed read whose client took nothing for too long was cut short.`,
  ];
  if (config.mode === 'auth') {
    lines.push(
      '',
      'Auth mode: every operation needs `Authorization: Bearer <token>` except register, login and health.',
      'Log in with **POST /auth/login** (Try it out) or paste a token in **Authorize**.',
    );
  }
  return lines.join('\n');
}

const LOGIN_DESCRIPTION =
  'Log in with **POST /auth/login** (Try it out), or paste a token in **Authorize**: the tables of the database appear once the page has a token.';

/** By name; of a procedure and a function of one name, the procedure first. */
function byNameProceduresFirst(a: RoutineInfo, b: RoutineInfo): number {
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  if (a.kind === b.kind) return 0;
  return a.kind === 'procedure' ? -1 : 1;
}

/**
 * `/rpc/<name>` per routine the caller may call, by name: a procedure's POST, a function's GET,
 * and its POST unless a procedure of the same name takes that (rpc.ts).
 */
function* routinePaths(
  routines: readonly RoutineInfo[],
  assembly: Assembly,
  components: Components,
  errorsByName: Map<string, JsonSchema>,
  paths: Record<string, JsonSchema>,
): Generator<void, void> {
  const { view } = assembly;
  const callable = routines.filter((routine) => view.routine?.(routine) ?? true);
  callable.sort(byNameProceduresFirst);
  const ids = new Set<string>();
  for (const routine of callable) {
    const path = `/rpc/${encodeURIComponent(routine.name)}`;
    const names = { id: uniqueName(`${routine.kind}_${routine.name}`, ids) };
    for (const operation of routineOperations) {
      if (operation.kind !== routine.kind) continue;
      if (paths[path]?.[operation.method] !== undefined) continue;
      const context = contextFor(assembly, components, operation, errorsByName);
      paths[path] = {
        ...paths[path],
        [operation.method]: needsNothingIn(
          assembly,
          operation.describe({ routine, names }, context),
        ),
      };
    }
    yield;
  }
}

function* assemble(
  tables: Iterable<TableInfo>,
  assembly: Assembly,
  version: string,
  routines: readonly RoutineInfo[] = [],
): Generator<void, OpenApiDocument> {
  const { config, view } = assembly;
  const auth = config.mode === 'auth';
  const needsNothing = (operation: JsonSchema) => needsNothingIn(assembly, operation);
  const components = new Components();
  const errorsByName = new Map<string, JsonSchema>();
  const shown = (route: RouteOperation) =>
    (auth || !route.authOnly) &&
    (!assembly.publicOnly || route.public === true) &&
    (route.files === undefined || view[route.files]) &&
    (route.mcp === undefined || view.mcp !== false) &&
    !(auth && route.signedIn && view.signedIn === false);
  const describe = (routes: readonly RouteOperation[]) => {
    const paths: Record<string, JsonSchema> = {};
    for (const route of routes.filter(shown)) {
      const operation = needsNothing(
        route.describe(contextFor(assembly, components, route, errorsByName)),
      );
      paths[route.path] = { ...paths[route.path], [route.method]: operation };
    }
    return paths;
  };
  const leading = describe(authOperations);
  const trailing = describe(otherRoutes);
  yield;

  // A table's component names stay clear of every shared schema's, used here or not.
  const taken = new Set(
    [...authOperations, ...otherRoutes, ...tableOperations].flatMap((op) =>
      Object.keys(op.schemas ?? {}),
    ),
  );
  taken.add('Error');
  const ids = new Set<string>();
  const tagNames = new Set(ROUTE_TAGS);
  const tablePaths: Record<string, JsonSchema> = {};
  const tableTags: JsonSchema[] = [];
  const sorted = assembly.publicOnly ? [] : [...tables];
  sorted.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // Names first, every table's: a row schema refers to the rows of the tables it relates to.
  const described = new Map<TableInfo, { view: DocumentTableView; names: TableNames }>();
  for (const table of sorted) {
    const tableView = view.table(table);
    if (tableView === null) continue;
    let tag = table.name;
    for (let n = 2; tagNames.has(tag); n++) tag = `${table.name} (${table.kind} ${n})`;
    tagNames.add(tag);
    const row = uniqueName(table.name, taken);
    described.set(table, {
      view: tableView,
      names: {
        tag,
        id: uniqueName(table.name, ids),
        row,
        insert: uniqueName(row, taken, '.insert'),
        update: uniqueName(row, taken, '.update'),
      },
    });
  }
  for (const [table, { view: tableView, names }] of described) {
    const relations = tableView.relations.flatMap((relation): DescribedRelation[] => {
      const target = described.get(relation.target);
      return target === undefined
        ? []
        : [{ relation, row: { $ref: `#/components/schemas/${target.names.row}` } }];
    });
    const base = `/table/${encodeURIComponent(table.name)}`;
    for (const operation of tableOperations) {
      if (
        operation.action !== 'read' &&
        (!tableView[operation.action] || table.updatable === false)
      ) {
        continue;
      }
      const one = { table, view: tableView, names, relations };
      if (operation.applies !== undefined && !operation.applies(one)) continue;
      const context = contextFor(assembly, components, operation, errorsByName);
      const described = needsNothing(operation.describe(one, context));
      tablePaths[`${base}${operation.path}`] = { [operation.method]: described };
    }
    tableTags.push({
      name: names.tag,
      description: `${table.kind === 'view' ? 'View' : 'Table'} ${table.name}`,
    });
    yield;
  }

  const rpcPaths: Record<string, JsonSchema> = {};
  yield* routinePaths(
    assembly.publicOnly ? [] : routines,
    assembly,
    components,
    errorsByName,
    rpcPaths,
  );

  const tags: JsonSchema[] = [
    ...(auth ? [{ name: 'auth', description: 'Register and log in' }] : []),
    ...tableTags,
    ...(Object.keys(rpcPaths).length > 0
      ? [{ name: RPC_TAG, description: 'Stored procedures and functions' }]
      : []),
    ...(assembly.publicOnly ? [] : [{ name: 'files', description: 'Uploads' }]),
    { name: 'health', description: 'Service' },
  ];
  return {
    openapi: '3.1.0',
    info: {
      title: 'tablegate',
      version,
      description: assembly.publicOnly ? LOGIN_DESCRIPTION : describeApi(config),
    },
    // `/`: the origin the description itself came from (what Swagger UI at /docs calls).
    servers: [
      config.baseUrl
        ? { url: config.baseUrl }
        : { url: '/', description: 'This gateway, where the description was read' },
    ],
    ...(auth ? { security: [{ [BEARER_SCHEME]: [] }] } : {}),
    tags,
    paths: { ...leading, ...tablePaths, ...rpcPaths, ...trailing },
    components: {
      ...components.toObject(),
      ...(auth
        ? {
            securitySchemes: {
              [BEARER_SCHEME]: {
                type: 'http',
                scheme: 'bearer',
                bearerFormat: 'JWT',
                description: 'The token from POST /auth/login',
              },
            },
          }
        : {}),
    },
  };
}

/** Runs the steps to the end at once. */
function drain<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * The description of the gateway serving `tables` with `config`, as a generator that pauses
 * after each table; under a policy only what the caller may use (policy/document-view.ts).
 */
export function documentSteps(
  tables: Iterable<TableInfo>,
  config: DocumentConfig,
  version = '0.0.0',
  view?: DocumentView,
  routines: readonly RoutineInfo[] = [],
): Generator<void, OpenApiDocument> {
  const assembly = {
    config,
    view: view ?? FULL_VIEW,
    underPolicy: view !== undefined,
    publicOnly: false,
  };
  return assemble(tables, assembly, version, routines);
}

/** The whole description at once (see documentSteps). */
export function buildOpenApiDocument(
  tables: Iterable<TableInfo>,
  config: DocumentConfig,
  version = '0.0.0',
  view?: DocumentView,
  routines: readonly RoutineInfo[] = [],
): OpenApiDocument {
  return drain(documentSteps(tables, config, version, view, routines));
}

/**
 * What the docs page shows in auth mode before it has a token: only what needs none (register,
 * login, health) and the Bearer scheme, so that "Authorize" is there. It names no table.
 */
export function buildLoginDocument(config: DocumentConfig, version = '0.0.0'): OpenApiDocument {
  const assembly = { config, view: FULL_VIEW, underPolicy: false, publicOnly: true };
  return drain(assemble([], assembly, version));
}
