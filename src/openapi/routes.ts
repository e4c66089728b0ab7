/**
 * Every route the description lists, from the route modules' own descriptions (src/http/
 * *.openapi.ts), in the order the document shows them: the auth routes, then per table its
 * operations, then per stored routine its operations, then the rest. A new route adds its
 * description here.
 */
import {
  loginOperation,
  meOperation,
  passwordOperation,
  registerOperation,
} from '../http/auth.openapi.js';
import { changesOperation } from '../http/changes.openapi.js';
import { descriptionOperation } from '../http/docs.openapi.js';
import { downloadOperation } from '../http/files.openapi.js';
import { healthOperation, liveOperation } from '../http/health.openapi.js';
import { mcpOperation } from '../http/mcp.openapi.js';
import { odataOperations } from '../http/odata.openapi.js';
import { keyReadOperation, readOperation } from '../http/read.openapi.js';
import { indexOperation } from '../http/root.openapi.js';
import {
  functionGetOperation,
  functionPostOperation,
  procedureOperation,
} from '../http/rpc.openapi.js';
import { uploadOperation } from '../http/upload.openapi.js';
import {
  createOperation,
  deleteOperation,
  filterDeleteOperation,
  filterUpdateOperation,
  updateOperation,
} from '../http/write.openapi.js';
import type { RouteOperation, RoutineOperation, TableOperation } from './operation.js';

export const authOperations: readonly RouteOperation[] = [
  registerOperation,
  loginOperation,
  meOperation,
  passwordOperation,
];

export const tableOperations: readonly TableOperation[] = [
  readOperation,
  keyReadOperation,
  changesOperation,
  createOperation,
  updateOperation,
  filterUpdateOperation,
  deleteOperation,
  filterDeleteOperation,
];

/** Per stored routine, after the tables: a procedure's POST, a function's GET and POST. */
export const routineOperations: readonly RoutineOperation[] = [
  procedureOperation,
  functionGetOperation,
  functionPostOperation,
];

export const otherRoutes: readonly RouteOperation[] = [
  uploadOperation,
  downloadOperation,
  mcpOperation,
  ...odataOperations,
  indexOperation,
  liveOperation,
  healthOperation,
  descriptionOperation,
];
