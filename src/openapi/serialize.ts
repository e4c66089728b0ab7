/**
 * The description as text in pieces (an operation, a schema each), so that a server can write a
 * large one between other requests: concatenated, the JSON pieces are exactly
 * `JSON.stringify(document)`, and the YAML pieces a YAML document that parses to the same value
 * (each piece is the `yaml` package's own text for it, indented where it sits).
 */
import { stringify } from 'yaml';

type Plain = Record<string, unknown>;

const isPlain = (value: unknown): value is Plain =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** JSON text of `value`, one piece per member down to `depth` levels of objects. */
export function* jsonPieces(value: unknown, depth = 3): Generator<string> {
  if (depth === 0 || !isPlain(value)) {
    yield JSON.stringify(value);
    return;
  }
  let separator = '{';
  for (const [key, item] of Object.entries(value)) {
    // JSON.stringify leaves these members out.
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    yield `${separator}${JSON.stringify(key)}:`;
    separator = ',';
    yield* jsonPieces(item, depth - 1);
  }
  yield separator === '{' ? '{}' : '}';
}

/** Every line of `text` that has content, indented by `indent`. */
function indented(text: string, indent: string): string {
  return indent === '' ? text : text.replace(/^(?=.)/gm, indent);
}

/** The YAML block mapping of `value`, one piece per member down to `depth` levels of objects. */
export function* yamlPieces(value: Plain, depth = 3, indent = ''): Generator<string> {
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    if (depth > 1 && isPlain(item) && Object.keys(item).length > 0) {
      // The key line as the package writes it (quoted where it must be), without its value.
      const head = stringify({ [key]: {} });
      if (head.endsWith(': {}\n') && !head.slice(0, -1).includes('\n')) {
        yield `${indent}${head.slice(0, -4)}\n`;
        yield* yamlPieces(item, depth - 1, `${indent}  `);
        continue;
      }
    }
    yield indented(stringify({ [key]: item }), indent);
  }
}
