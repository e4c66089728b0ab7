/**
 * The memo layer: what the pipeline makes from the schema's objects once and hands to every later
 * request that brings the same ones (a select list's fields, row serializer and CSV shape; a
 * routine's serializers). One rule keeps every entry correct without ever clearing it
 * (CONTRIBUTING.md, "What a cache may key on"): a memo is keyed only on an object that never
 * changes once made — a schema version's TableInfo, ColumnInfo or RoutineInfo, a plan's
 * selection list, a policy's Grant, a role's Viewer — and its value is a function of that key
 * alone. A schema re-read makes new objects for what changed (an unchanged table keeps its
 * object), so an entry made from an older one is never found again, and being held weakly it is
 * dropped with the schema it was made from.
 */
export class Memo<K extends object, V> {
  private readonly kept = new WeakMap<K, V>();

  /** `make`: the value of a key, a function of the key alone (no request, caller or clock). */
  constructor(private readonly make: (key: K) => V) {}

  /** The value made for `key`, made now if it was not yet (null is a value, kept as any). */
  of(key: K): V {
    let value = this.kept.get(key);
    if (value === undefined) {
      value = this.make(key);
      this.kept.set(key, value);
    }
    return value;
  }
}
