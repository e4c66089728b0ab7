/**
 * The descriptions of `POST /rpc/<procedure>`, `GET /rpc/<function>` and `POST /rpc/<function>`
 * (rpc.ts, docs/routines.md): per routine the caller may call, its parameters with their types
 * (each IN and INOUT one required), the result sets and OUT values a procedure answers, the
 * value a function answers, and the errors of the stages a call runs.
 */
import type { ParameterInfo, RoutineInfo } from '../db/routines.js';
import type { Stage } from '../errors.js';
import { MAX_ROUTINE_RESULT_CHARS } from '../limits.js';
import { columnSchema } from '../openapi/column-schema.js';
import {
  type DescribedRoutine,
  type JsonSchema,
  json,
  type RoutineOperation,
} from '../openapi/operation.js';

const CALL_STAGES: readonly Stage[] = [
  'request',
  'routine',
  'arguments',
  'execute',
  'write',
  'routine-call',
];
const POST_STAGES: readonly Stage[] = ['json-body', ...CALL_STAGES];
/** MySQL's refusals inside a routine, under their own error names: as for writes. */
const RPC_MYSQL_STATUSES: readonly number[] = [400, 403, 404, 409];

/** The tag of every routine's operations in the description. */
export const RPC_TAG = 'rpc';

const sent = (routine: RoutineInfo) => routine.parameters.filter((p) => p.mode !== 'out');

/** A parameter's schema, with its mode where it is not plain IN. */
function parameterSchema(parameter: ParameterInfo): JsonSchema {
  const schema = columnSchema(parameter.column);
  if (parameter.mode === 'inout') schema.description = `${schema.description}; INOUT`;
  return schema;
}

/** The JSON body of a call: every IN and INOUT parameter by name, each required (null: NULL). */
function argumentsSchema(routine: RoutineInfo): JsonSchema {
  const parameters = sent(routine);
  return {
    type: 'object',
    properties: Object.fromEntries(parameters.map((p) => [p.name, parameterSchema(p)])),
    ...(parameters.length > 0 ? { required: parameters.map((p) => p.name) } : {}),
    additionalProperties: false,
  };
}

/** What the routine's author wrote (ROUTINE_COMMENT), then what the caller should know. */
function description(routine: RoutineInfo, notes: readonly string[]): string {
  return [routine.comment, ...notes].filter((line) => line !== '').join('\n\n');
}

const requestBody = (routine: RoutineInfo) => ({
  required: sent(routine).length > 0,
  content: json(argumentsSchema(routine)),
});

const RESULTS_NOTE = `Every result set the procedure sends, in order, each an array of rows whose keys are its columns, typed as table rows are; at most ${MAX_ROUTINE_RESULT_CHARS} characters of them in all.`;

export const procedureOperation: RoutineOperation = {
  kind: 'procedure',
  method: 'post',
  describe: ({ routine, names }: DescribedRoutine, context) => {
    const outs = routine.parameters.filter((p) => p.mode !== 'in');
    return {
      tags: [RPC_TAG],
      operationId: `call_${names.id}`,
      summary: `Call the stored procedure ${routine.name}`,
      description: description(routine, [
        'Runs as MySQL runs it for any client, outside any transaction of the gateway: its own transaction commits inside it; a failure half-way keeps what it committed before.',
      ]),
      requestBody: requestBody(routine),
      responses: {
        200: {
          description: 'Called',
          content: json({
            type: 'object',
            required: ['success', 'results', 'out'],
            properties: {
              success: { const: true },
              results: {
                type: 'array',
                description: RESULTS_NOTE,
                items: { type: 'array', items: { type: 'object' } },
              },
              out: {
                type: 'object',
                description: 'The OUT and INOUT parameters by name, after the call',
                properties: Object.fromEntries(outs.map((p) => [p.name, parameterSchema(p)])),
                required: outs.map((p) => p.name),
                additionalProperties: false,
              },
            },
          }),
        },
        ...context.errors('procedure', POST_STAGES, RPC_MYSQL_STATUSES),
      },
    };
  },
};

/** `{ success, value }`: a function's answer. */
function valueResponse(routine: RoutineInfo): JsonSchema {
  return {
    description: 'Called',
    content: json({
      type: 'object',
      required: ['success', 'value'],
      properties: {
        success: { const: true },
        value: routine.returns === null ? {} : columnSchema(routine.returns),
      },
    }),
  };
}

export const functionGetOperation: RoutineOperation = {
  kind: 'function',
  method: 'get',
  describe: ({ routine, names }: DescribedRoutine, context) => ({
    tags: [RPC_TAG],
    operationId: `get_${names.id}`,
    summary: `Call the stored function ${routine.name}`,
    description: description(routine, [
      'Each parameter is given once, as text; NULL, and JSON values, need the POST form.',
    ]),
    parameters: sent(routine).map((parameter) => ({
      name: parameter.name,
      in: 'query',
      required: true,
      schema: columnSchema({ ...parameter.column, nullable: false }),
    })),
    responses: {
      200: valueResponse(routine),
      ...context.errors('function-get', CALL_STAGES, RPC_MYSQL_STATUSES),
    },
  }),
};

export const functionPostOperation: RoutineOperation = {
  kind: 'function',
  method: 'post',
  describe: ({ routine, names }: DescribedRoutine, context) => ({
    tags: [RPC_TAG],
    operationId: `post_${names.id}`,
    summary: `Call the stored function ${routine.name} with a JSON body`,
    description: description(routine, []),
    requestBody: requestBody(routine),
    responses: {
      200: valueResponse(routine),
      ...context.errors('function-post', POST_STAGES, RPC_MYSQL_STATUSES),
    },
  }),
};
