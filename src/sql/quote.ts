/**
 * The only way a name enters SQL text. Callers pass names that the plan stage has already
 * resolved against the schema cache; quoting is the second line of defence, not the first.
 */

/**
 * Quoted names, kept: every request quotes the same few table and column names again (hot path:
 * a replaceAll and a concatenation per name per request). The names are the schema's, so the
 * map stays small; the bound only guards against a caller that ever quoted something else.
 */
const quoted = new Map<string, string>();
const MAX_KEPT = 10_000;

/** Backtick-quotes a MySQL identifier, doubling any backtick inside it. */
export function quoteIdent(name: string): string {
  let text = quoted.get(name);
  if (text === undefined) {
    text = `\`${name.replaceAll('`', '``')}\``;
    if (quoted.size >= MAX_KEPT) quoted.clear();
    quoted.set(name, text);
  }
  return text;
}
