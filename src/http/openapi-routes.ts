/**
 * Every route the description lists, from the route modules' own descriptions (src/http/
 * *.openapi.ts), in the order the document shows them: the auth routes, then per table its
 * operations, then per stored routine its operations, then the rest. A new route adds its
 * description here.
 */

import type { RouteOperation, RoutineOperation, TableOperation } from '../openapi/operation.js';
import {
  loginOperation,
  meOperation,
  passwordOperation,
  registerOperation,
} from './auth.openapi.js';
import { changesOperation } from './changes.openapi.js';
import { descriptionOperation } from './docs.openapi.js';
import { downloadOperation } from './files.openapi.js';
import { healthOperation, liveOperation } from './health.openapi.js';
import { mcpOperation } from './mcp.openapi.js';
import { odataOperations } from './odata.openapi.js';
import { keyReadOperation, readOperation } from './read.openapi.js';
import { indexOperation } from './root.openapi.js';
import { functionGetOperation, functionPostOperation, procedureOperation } from './rpc.openapi.js';
import { uploadOperation } from './upload.openapi.js';
import {
  createOperation,
  deleteOperation,
  filterDeleteOperation,
  filterUpdateOperation,
  updateOperation,
} from './write.openapi.js';

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
