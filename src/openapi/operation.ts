/**
 * What a route module's description is made of (the `*.openapi.ts` file beside each route in
 * src/http/) and what the assembler (http/openapi-document.ts) hands it: the caller's view of a
 * table, and a context through which an operation names the component schemas, parameters and
 * error responses it uses, so that the document carries each of those once however many tables
 * share it.
 */
import type { Config } from '../config.js';
import type { RoutineInfo } from '../db/routines.js';
import type { ColumnInfo, Relation, TableInfo } from '../db/schema-types.js';
import type { Stage } from '../errors.js';
import type { JsonSchema } from './column-schema.js';

export type { JsonSchema } from './column-schema.js';

/**
 * The settings the description shows. The database's name is not among them: see
 * http/openapi-document.ts.
 */
export type DocumentConfig = Pick<
  Config,
  'mode' | 'baseUrl' | 'maxFileSize' | 'maxFiles' | 'bodyLimit'
>;

/** What one caller may use of a table under a policy (policy/document-view.ts builds it). */
export interface DocumentTableView {
  /** The columns it may read: read parameters, the row schema, and update and delete keys. */
  readonly read: readonly ColumnInfo[];
  /** The columns it may write; absent when the action is not granted. */
  readonly create?: readonly ColumnInfo[];
  readonly update?: readonly ColumnInfo[];
  readonly delete?: true;
  /** The relations it may follow (plan/view.ts `followable`), in the table's order. */
  readonly relations: readonly Relation[];
}

/**
 * A policy's view for one caller: per table its view (null hides it), the routines it may call,
 * and the file routes.
 */
export interface DocumentView {
  table(table: TableInfo): DocumentTableView | null;
  /** Whether the caller may call the routine; every routine when absent. */
  routine?(routine: RoutineInfo): boolean;
  readonly upload: boolean;
  readonly download: boolean;
  /** Whether the caller may use the MCP endpoint (a role granted anything); true when absent. */
  readonly mcp?: boolean;
  /**
   * False for a request without a token in auth mode (`anonymous` under a policy): routes that
   * need a signed-in caller whatever the policy grants are left out. True when absent.
   */
  readonly signedIn?: boolean;
}

/** The component names the assembler gave one table (unique in the document, valid as keys). */
export interface TableNames {
  readonly tag: string;
  readonly id: string;
  readonly row: string;
  readonly insert: string;
  readonly update: string;
}

/** A relation the caller may follow, with a `$ref` to its target's row schema. */
export interface DescribedRelation {
  readonly relation: Relation;
  readonly row: JsonSchema;
}

/** One table as an operation describes it: the table, what the caller may use, its names. */
export interface DescribedTable {
  readonly table: TableInfo;
  readonly view: DocumentTableView;
  readonly names: TableNames;
  readonly relations: readonly DescribedRelation[];
}

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface DescriptionContext {
  readonly config: DocumentConfig;
  /** Auth mode: every operation not marked public needs a token. */
  readonly auth: boolean;
  /**
   * A `$ref` to a schema of the table (its name from TableNames); `schema` joins the document
   * on first use.
   */
  schema(name: string, schema: JsonSchema | (() => JsonSchema)): JsonSchema;
  /** A `$ref` to one of the shared schemas the operation declares (`schemas`). */
  shared(name: string): JsonSchema;
  /** A `$ref` to the shared parameter `name`; `parameter` joins the document on first use. */
  parameter(name: string, parameter: JsonSchema): JsonSchema;
  /**
   * The error responses of the operation `name` running `stages`, one `$ref` per status to a
   * shared response (error-codes.ts builds it from the catalogue). The auth guard's stage is
   * added in auth mode, and the policy stages are dropped without a policy. `mysql`: statuses
   * at which MySQL's own error names may be the code.
   */
  errors(name: string, stages: readonly Stage[], mysql?: readonly number[]): JsonSchema;
}

interface Operation {
  readonly method: Method;
  /**
   * Component schemas the operation shares with others, by name (a result body, a file record):
   * the assembler keeps these names from tables, and writes those an operation uses once.
   */
  readonly schemas?: Readonly<Record<string, JsonSchema>>;
}

/** An operation every table has, under `/table/<name>`. */
export interface TableOperation extends Operation {
  /** The policy action it needs (a view without it leaves the operation out). */
  readonly action: 'read' | 'create' | 'update' | 'delete';
  /** Appended to `/table/<name>`. */
  readonly path: string;
  /** Whether the table has the operation at all for this caller (absent: it has). */
  applies?(described: DescribedTable): boolean;
  describe(described: DescribedTable, context: DescriptionContext): JsonSchema;
}

/** The names the assembler gave one routine (unique in the document). */
export interface RoutineNames {
  /** For operationIds: unique among routines, procedures and functions apart. */
  readonly id: string;
}

/** One routine as an operation describes it. */
export interface DescribedRoutine {
  readonly routine: RoutineInfo;
  readonly names: RoutineNames;
}

/** An operation of every stored procedure or function, under `/rpc/<name>`. */
export interface RoutineOperation extends Operation {
  /** The routines it describes. */
  readonly kind: RoutineInfo['kind'];
  describe(described: DescribedRoutine, context: DescriptionContext): JsonSchema;
}

/** An operation of its own path (auth, files, health…). */
export interface RouteOperation extends Operation {
  readonly path: string;
  /** Exists only in auth mode. */
  readonly authOnly?: true;
  /** Needs no token in auth mode (the docs page shows these before it has one). */
  readonly public?: true;
  /** Needs a token in auth mode even where a policy grants `anonymous` something. */
  readonly signedIn?: true;
  /** The file action a policy must grant the caller for the operation to be shown. */
  readonly files?: 'upload' | 'download';
  /** Shown only where the caller may use the MCP endpoint (DocumentView.mcp). */
  readonly mcp?: true;
  describe(context: DescriptionContext): JsonSchema;
}

/** An optional request header of an operation (Prefer, If-Match, If-None-Match, Range…). */
export const headerParameter = (
  name: string,
  description?: string,
  schema: JsonSchema = { type: 'string' },
): JsonSchema => ({
  name,
  in: 'header',
  required: false,
  schema,
  ...(description === undefined ? {} : { description }),
});

/** The body of a JSON answer or request. */
export const json = (schema: JsonSchema): JsonSchema => ({ 'application/json': { schema } });
