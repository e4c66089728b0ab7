/**
 * The description of the OData service under `/odata/` (odata/routes.ts, docs/odata.md): its service
 * document, its `$metadata` and its resources. The entity sets, their types and the function
 * and action imports are described by `$metadata` itself, for the caller's role; here only the
 * routes and the errors their stages answer, in OData's error form.
 */
import type { Stage } from '../errors.js';
import { headerParameter, json, type RouteOperation } from '../openapi/operation.js';

/** What every OData request may meet: its own refusals, then those of the request it stands for. */
const ODATA_STAGES: readonly Stage[] = ['request', 'odata', 'policy-action'];
/**
 * A resource also answers every error of the REST request it stands for (its table's read or
 * write, its routine's call), in OData's form: those are the `default` response, described
 * with the REST routes, not repeated here.
 */
const RESOURCE_STAGES: readonly Stage[] = ODATA_STAGES;

const TAG = 'odata';
const RESOURCE = '/odata/{resource}';
const BATCH = '/odata/$batch';
const ODATA_ERROR = {
  type: 'object',
  description: 'An OData error: `{"error": {"code": <the catalogue code>, "message": …}}`',
};

/** If-Match on an entity's write (docs/odata.md, "ETags and If-Match"), as REST's keyed writes take it. */
const IF_MATCH = headerParameter(
  'If-Match',
  "The entity's ETag (`@odata.etag` of its read, same role), or several, or `*` (the entity exists): the write goes on only while the row still has it, checked on the row locked in the write's transaction; else 412 `PRECONDITION_FAILED` and nothing changes",
);
/** The ETag of an entity's read: its row's tag (docs/odata.md, "ETags and If-Match"). */
const ETAG_HEADER = {
  ETag: {
    description:
      "An entity (`<Set>(<key>)`): its row's tag, as in `@odata.etag`, which If-Match on its writes takes. A collection, its `$count` or a to-many navigation: the SHA-1 of exactly this answer (docs/caching.md)",
    schema: { type: 'string' },
  },
};
/** If-None-Match on a collection read (docs/odata.md, "ETags and If-Match"), as on REST's reads. */
const IF_NONE_MATCH = headerParameter(
  'If-None-Match',
  'An ETag a collection, `$count` or to-many navigation URL gave (several comma-separated, `W/` accepted, or `*`): while the answer is the same, 304 with no body. An entity read is answered whole',
);

/** The writes of one entity, which take If-Match and may answer its 412. */
const CONDITIONAL: ReadonlySet<string> = new Set(['odataMerge', 'odataReplace', 'odataDelete']);

function operation(
  path: string,
  method: RouteOperation['method'],
  operationId: string,
  summary: string,
  description: string,
  given: readonly Stage[],
): RouteOperation {
  const conditional = CONDITIONAL.has(operationId);
  const stages: readonly Stage[] = conditional ? [...given, 'precondition'] : given;
  return {
    path,
    method,
    // Shown where the caller may use the service: the same decision as MCP's (a role granted anything).
    mcp: true,
    describe: (context) => ({
      tags: [TAG],
      operationId,
      summary,
      description,
      ...(path === '/odata/{resource}'
        ? {
            parameters: [
              {
                name: 'resource',
                in: 'path',
                required: true,
                schema: { type: 'string' },
                description:
                  'An entity set (`orders`), an entity (`orders(5)`, `order_items(order_id=5,line=1)`), its navigation or property, `<Set>/$count`, or a function import (`twice(n=4)`)',
              },
              ...(conditional ? [IF_MATCH] : []),
              ...(operationId === 'odataRead' ? [IF_NONE_MATCH] : []),
            ],
          }
        : {}),
      responses: {
        200: {
          description: 'The OData answer',
          ...(operationId === 'odataRead' ? { headers: ETAG_HEADER } : {}),
          content: json({ type: 'object' }),
        },
        ...(operationId === 'odataRead'
          ? {
              304: {
                description: "Not modified: the ETag sent in If-None-Match is still the answer's",
                headers: ETAG_HEADER,
              },
            }
          : {}),
        ...(path === BATCH
          ? {}
          : {
              ...(method === 'post' ? { 201: { description: 'The created entity' } } : {}),
              204: { description: 'No content' },
            }),
        ...context.errors(operationId, stages),
        default: {
          description: 'Any error of the REST request it stands for, in OData form',
          content: json(ODATA_ERROR),
        },
      },
    }),
  };
}

export const odataOperations: readonly RouteOperation[] = [
  // `/odata/` answers the same; an OpenAPI path has no trailing slash.
  operation(
    '/odata',
    'get',
    'odataService',
    'OData v4 service document',
    'The entity sets and function imports the caller may use. Point Excel or Power BI (OData feed), SAP UI5 or DevExtreme at this URL.',
    ODATA_STAGES,
  ),
  operation(
    '/odata/$metadata',
    'get',
    'odataMetadata',
    'OData v4 $metadata (CSDL XML; CSDL JSON with $format=json)',
    'Entity types with keys and Edm-typed properties, navigation properties from foreign keys, entity sets, function and action imports: what the caller may see.',
    ODATA_STAGES,
  ),
  operation(
    RESOURCE,
    'get',
    'odataRead',
    'Read an OData resource',
    'With $select, $filter, $orderby, $top, $skip, $count, $expand, $apply, $format.',
    RESOURCE_STAGES,
  ),
  operation(
    RESOURCE,
    'post',
    'odataCreate',
    'Create an entity, or call an action import',
    'The entity as JSON (201 with Location), or the action’s parameters.',
    RESOURCE_STAGES,
  ),
  operation(
    RESOURCE,
    'patch',
    'odataMerge',
    'Merge into an entity',
    'The properties to change; 204.',
    RESOURCE_STAGES,
  ),
  operation(
    RESOURCE,
    'put',
    'odataReplace',
    'Replace an entity',
    'Properties left out that are nullable become null; 204.',
    RESOURCE_STAGES,
  ),
  operation(RESOURCE, 'delete', 'odataDelete', 'Delete an entity', '204.', RESOURCE_STAGES),
  operation(
    BATCH,
    'post',
    'odataBatch',
    'Several OData requests in one (JSON 4.01 or multipart/mixed 4.0)',
    'Each request answered in its own part; a change set (an atomicityGroup) is one transaction, all or none (docs/odata-batch.md).',
    [...ODATA_STAGES, 'batch'],
  ),
];
