/**
 * The `components` of one document, filled as operations use them: a schema, parameter or
 * response shared by many operations (a read option, an error response, a result body) is
 * written once and referred to by `$ref`, and only what some operation uses is written at all.
 */
import type { JsonSchema } from './column-schema.js';

type Section = 'schemas' | 'parameters' | 'responses';

export class Components {
  private readonly sections: Record<Section, Record<string, JsonSchema>> = {
    schemas: {},
    parameters: {},
    responses: {},
  };

  /** A `$ref` to `name` in `section`; `value` is made and added on first use. */
  ref(section: Section, name: string, value: JsonSchema | (() => JsonSchema)): JsonSchema {
    const entries = this.sections[section];
    if (!Object.hasOwn(entries, name)) {
      entries[name] = typeof value === 'function' ? value() : value;
    }
    return { $ref: `#/components/${section}/${name}` };
  }

  /** Whether `name` is taken in `section`. */
  has(section: Section, name: string): boolean {
    return Object.hasOwn(this.sections[section], name);
  }

  /** The sections that have entries, schemas first. */
  toObject(): JsonSchema {
    const result: JsonSchema = {};
    for (const [section, entries] of Object.entries(this.sections)) {
      if (Object.keys(entries).length > 0) result[section] = entries;
    }
    return result;
  }
}
