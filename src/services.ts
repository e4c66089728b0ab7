/** What route modules are given: configuration, the database and the schema cache. */
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import type { SchemaCache } from './db/schema.js';

export interface Services {
  readonly config: Config;
  readonly db: Database;
  readonly schema: SchemaCache;
}
