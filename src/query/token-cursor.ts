/**
 * A place in a token list (query/lexer.ts), as the recursive-descent parsers of the query
 * language (filter-parser.ts, apply-parser.ts) move through it. The list always ends with
 * `end`, and nothing moves past it.
 */
import type { Token } from './lexer.js';

export class TokenCursor {
  constructor(
    protected readonly tokens: readonly Token[],
    protected index = 0,
  ) {}

  /** The index of the next token. */
  get position(): number {
    return this.index;
  }

  protected peek(offset = 0): Token {
    const last = this.tokens.length - 1;
    return this.tokens[Math.min(this.index + offset, last)] as Token;
  }

  protected next(): Token {
    const token = this.peek();
    if (token.kind !== 'end') this.index++;
    return token;
  }
}
