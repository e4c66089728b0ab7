/**
 * The OData service of each role (docs/odata.md): its model (model.ts) and its `$metadata` in
 * XML and JSON (csdl.ts), made once per view and schema version in slices of event-loop time
 * (slices.ts runInSlices), so that a schema of thousands of tables is described
 * between other requests, and kept as bytes with an ETag. Keyed as the API description is: by
 * the role (a role's grants decide what it sees) and whether the caller has a token.
 */
import { hashedBytes } from '../http/description-cache.js';
import { runInSlices } from '../slices.js';
import { csdlJson, csdlXml } from './csdl.js';
import type { ODataModel } from './model.js';

export interface MetadataBytes {
  readonly bytes: Buffer;
  readonly etag: string;
}

interface Entry {
  readonly version: number;
  model: ODataModel | null;
  readonly making: Promise<ODataModel>;
  xml?: Promise<MetadataBytes>;
  json?: Promise<MetadataBytes>;
}

/** A document's pieces (csdl.ts) as bytes with the weak ETag of those bytes, in steps. */
function* encode(pieces: Iterable<string>): Generator<void, MetadataBytes> {
  const { bytes, hash } = yield* hashedBytes(pieces);
  return { bytes, etag: `W/"${hash}"` };
}

export class ServiceCache {
  private readonly entries = new Map<string, Entry>();

  private entry(key: string, version: number, steps: () => Generator<void, ODataModel>): Entry {
    let entry = this.entries.get(key);
    if (entry?.version !== version) {
      const making = runInSlices(steps());
      const made: Entry = { version, model: null, making };
      making.then(
        (model) => {
          made.model = model;
        },
        () => {
          // A failed build is not kept: the next request tries again.
          if (this.entries.get(key) === made) this.entries.delete(key);
        },
      );
      entry = made;
      this.entries.set(key, entry);
    }
    return entry;
  }

  /** The model of view `key` at schema `version`: at once when made, else when it is. */
  model(
    key: string,
    version: number,
    steps: () => Generator<void, ODataModel>,
  ): ODataModel | Promise<ODataModel> {
    const entry = this.entry(key, version, steps);
    return entry.model ?? entry.making;
  }

  /** `$metadata` of view `key` at schema `version` in `format`. */
  async metadata(
    key: string,
    version: number,
    steps: () => Generator<void, ODataModel>,
    format: 'xml' | 'json',
  ): Promise<MetadataBytes> {
    const entry = this.entry(key, version, steps);
    const made = entry[format];
    if (made !== undefined) return made;
    const making = entry.making.then((model) =>
      runInSlices(encode(format === 'xml' ? csdlXml(model) : csdlJson(model))),
    );
    entry[format] = making;
    making.catch(() => {
      if (entry[format] === making) delete entry[format];
    });
    return making;
  }
}
