/**
 * JSON without losing digits, for comparing the gateway's answers with values read by plain SQL:
 * a number keeps its text (`12.50`, `18446744073709551615` as written), so DECIMAL digits and
 * large integers are compared exactly; objects keep their key order (exactText writes it).
 */

/** A JSON number as written. */
export class ExactNumber {
  constructor(readonly text: string) {}
}

export const num = (value: string | number | bigint): ExactNumber => new ExactNumber(String(value));

/** A JSON string at lastIndex: no raw quote, backslash or control character but escaped. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON refuses raw.
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

/** JSON.parse, but numbers are ExactNumbers. Throws on anything that is not JSON. */
export function parseExact(text: string): unknown {
  let i = 0;
  const fail = (what: string): never => {
    throw new Error(`not JSON at ${i}: ${what} (${JSON.stringify(text.slice(i, i + 40))})`);
  };
  const space = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i] as string)) i++;
  };
  const value = (): unknown => {
    space();
    const c = text[i];
    if (c === '{') {
      i++;
      const object: Record<string, unknown> = {};
      space();
      if (text[i] === '}') {
        i++;
        return object;
      }
      for (;;) {
        space();
        if (text[i] !== '"') fail('expected a key');
        const key = string();
        space();
        if (text[i++] !== ':') fail('expected :');
        object[key] = value();
        space();
        if (text[i] === ',') i++;
        else if (text[i++] === '}') return object;
        else fail('expected , or }');
      }
    }
    if (c === '[') {
      i++;
      const array: unknown[] = [];
      space();
      if (text[i] === ']') {
        i++;
        return array;
      }
      for (;;) {
        array.push(value());
        space();
        if (text[i] === ',') i++;
        else if (text[i++] === ']') return array;
        else fail('expected , or ]');
      }
    }
    if (c === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(
      text.slice(i, i + 400),
    );
    if (literal === null) return fail('expected a value');
    i += literal[0].length;
    const word = literal[0];
    if (word === 'true') return true;
    if (word === 'false') return false;
    if (word === 'null') return null;
    return new ExactNumber(word);
  };
  const string = (): string => {
    STRING.lastIndex = i;
    const match = STRING.exec(text);
    if (match === null) return fail('bad string');
    i += match[0].length;
    return JSON.parse(match[0]) as string;
  };
  const result = value();
  space();
  if (i !== text.length) fail('text after the value');
  return result;
}

/** The canonical text of a parsed or built value: key order kept, numbers as written. */
export function exactText(value: unknown): string {
  if (value instanceof ExactNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(exactText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${exactText(v)}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}
