/**
 * `$apply` text → ApplyStep[], by recursive descent over the grammar of docs/totals.md:
 * filter(…) and compute(…) steps, then at most one groupby(…) or aggregate(…), last. Knows no
 * schema. The whole text is lexed once (query/lexer.ts, with `/` between steps) and filter()
 * conditions are parsed by the filter parser from those tokens, so every position in a message
 * is one in the `$apply` text. The filter() steps and compute() functions share one budget of
 * the filter limits (function calls, pattern characters), so one `$apply` costs MySQL at most
 * what one `$filter` may.
 */
import { applySyntax, limitExceeded } from '../errors.js';
import { MAX_APPLY_BYTES, MAX_APPLY_ITEMS } from '../limits.js';
import {
  AGGREGATE_METHODS,
  type Aggregate,
  type AggregateMethod,
  type ApplyStep,
  COLUMN_FNS,
  type ColumnFn,
  type ColumnRef,
  type Computed,
} from './ast.js';
import { countCall, describe, newBudget, parseFilterTokens, placed } from './filter-parser.js';
import { asciiKeyword, lex, type Token } from './lexer.js';
import { TokenCursor } from './token-cursor.js';

const STEPS = 'a step: filter(…), compute(…), groupby(…) or aggregate(…)';
const METHODS: ReadonlySet<string> = new Set<AggregateMethod>(AGGREGATE_METHODS);
const FNS: ReadonlySet<string> = new Set<ColumnFn>(COLUMN_FNS);

type NameToken = Extract<Token, { kind: 'word' | 'name' }>;

/** Parses `$apply` text. Throws only ApiError (APPLY_SYNTAX, FILTER_SYNTAX, LIMIT_EXCEEDED). */
export function parseApply(text: string): ApplyStep[] {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_APPLY_BYTES) {
    throw limitExceeded(
      `$apply is ${bytes} bytes long; the limit is ${MAX_APPLY_BYTES} bytes (UTF-8)`,
    );
  }
  // The filter parser's messages (a filter() step, the shared limits) are about `$apply`.
  return placed('$apply', () => new ApplyParser(lex(text, { steps: true }).tokens).parse());
}

function syntaxError(token: Token, expected: string) {
  if (token.kind === 'invalid' && token.fatal === true) return applySyntax(token.problem);
  return applySyntax(
    `Invalid $apply at position ${token.position}: expected ${expected}, found ${describe(token, 'end of $apply')}`,
  );
}

class ApplyParser extends TokenCursor {
  private readonly budget = newBudget();
  /** compute() items, groupby values and aggregates so far (MAX_APPLY_ITEMS). */
  private items = 0;

  parse(): ApplyStep[] {
    const steps: ApplyStep[] = [];
    for (;;) {
      const start = this.peek();
      const last = steps[steps.length - 1];
      if (last !== undefined && (last.kind === 'groupby' || last.kind === 'aggregate')) {
        // A step after the grouping would work on the groups (OData's filter of totals).
        throw applySyntax(
          `Invalid $apply at position ${start.position}: ${last.kind}(…) must be the last step; filter rows before grouping, with filter(…) or $filter`,
        );
      }
      steps.push(this.step());
      const next = this.next();
      if (next.kind === 'end') return steps;
      if (next.kind !== 'slash') throw syntaxError(next, "'/' and the next step, or end of $apply");
    }
  }

  private expect(kind: 'lparen' | 'rparen', expected: string): void {
    const token = this.next();
    if (token.kind !== kind) throw syntaxError(token, expected);
  }

  private keyword(token: Token): string | null {
    return token.kind === 'word' ? asciiKeyword(token.text) : null;
  }

  private expectKeyword(keyword: string, expected: string): void {
    const token = this.next();
    if (this.keyword(token) !== keyword) throw syntaxError(token, expected);
  }

  private step(): ApplyStep {
    const token = this.next();
    const name = this.keyword(token);
    const known =
      name === 'filter' || name === 'compute' || name === 'groupby' || name === 'aggregate';
    if (!known || this.peek().kind !== 'lparen') throw syntaxError(token, STEPS);
    this.next(); // `(`
    switch (name) {
      case 'filter': {
        const { expr, next } = parseFilterTokens(this.tokens, this.index, this.budget);
        this.index = next;
        this.expect('rparen', "'and', 'or' or ')'");
        return { kind: 'filter', expr };
      }
      case 'compute': {
        const items = this.list(() => this.computed());
        this.expect('rparen', "',' and another computed value, or ')'");
        return { kind: 'compute', items };
      }
      case 'groupby':
        return this.groupby();
      case 'aggregate':
        return { kind: 'aggregate', aggregates: this.aggregates() };
    }
  }

  /** `item ( "," item )*`. */
  private list<T>(item: () => T): T[] {
    const items = [item()];
    while (this.peek().kind === 'comma') {
      this.next();
      items.push(item());
    }
    return items;
  }

  /** Counts one compute() item, groupby value or aggregate, at its first token. */
  private countItem(token: Token): void {
    this.items++;
    if (this.items > MAX_APPLY_ITEMS) {
      throw limitExceeded(
        `Invalid $apply at position ${token.position}: more than ${MAX_APPLY_ITEMS} computed values, groupby values and aggregates in all`,
      );
    }
  }

  /** `fn ( ref ) as alias`. */
  private computed(): Computed {
    const token = this.next();
    const fn = this.keyword(token);
    if (fn === null || !FNS.has(fn) || this.peek().kind !== 'lparen') {
      throw syntaxError(token, `a function of a column (${COLUMN_FNS.join(', ')})`);
    }
    this.countItem(token);
    countCall(this.budget, token);
    this.next(); // `(`
    const argument = this.peek();
    if (argument.kind === 'word' && this.peek(1).kind === 'lparen') {
      throw syntaxError(argument, `a column (${fn} takes a column, not another function)`);
    }
    const column = this.ref('a column');
    this.expect('rparen', "')'");
    this.expectKeyword('as', `'as' and a name (${fn}(${column.name}) as x)`);
    const alias = this.alias();
    const call = { kind: 'call', fn: fn as ColumnFn, column, position: token.position } as const;
    return { call, alias: alias.name, position: alias.position };
  }

  /** `groupby ( ( ref , … ) [ , aggregate ( … ) ] )`, after its first `(`. */
  private groupby(): ApplyStep {
    this.expect('lparen', "'(' and the values to group by, as in groupby((category))");
    const refs = this.list(() => {
      this.countItem(this.peek());
      return this.ref('a column, a path to one or a computed name');
    });
    this.expect('rparen', "',' and another value, or ')'");
    let aggregates: Aggregate[] = [];
    if (this.peek().kind === 'comma') {
      this.next();
      const token = this.next();
      if (this.keyword(token) !== 'aggregate' || this.peek().kind !== 'lparen') {
        throw syntaxError(token, 'aggregate(…)');
      }
      this.next(); // `(`
      aggregates = this.aggregates();
    }
    this.expect('rparen', "')' (or ', aggregate(…)')");
    return { kind: 'groupby', refs, aggregates };
  }

  /** `agg ( , agg )* )`, after `aggregate(`. */
  private aggregates(): Aggregate[] {
    const aggregates = this.list(() => this.aggregate());
    this.expect('rparen', "',' and another aggregate, or ')'");
    return aggregates;
  }

  /** `ref with method as alias` or `$count as alias`. */
  private aggregate(): Aggregate {
    const token = this.peek();
    this.countItem(token);
    const counts =
      token.kind === 'word' &&
      token.text.toLowerCase() === '$count' &&
      this.keyword(this.peek(1)) === 'as';
    if (counts) {
      this.next();
      this.next();
      const alias = this.alias();
      return { kind: 'count', alias: alias.name, position: alias.position };
    }
    const ref = this.ref('a column, a path to one, a computed name or $count');
    this.expectKeyword('with', `'with' and a method (${ref.name} with sum as total)`);
    const methodToken = this.next();
    const method = this.keyword(methodToken);
    if (method === null || !METHODS.has(method)) {
      throw syntaxError(methodToken, `a method (${AGGREGATE_METHODS.join(', ')})`);
    }
    this.expectKeyword('as', `'as' and a name (${ref.name} with ${method} as x)`);
    const alias = this.alias();
    const { name, position } = alias;
    return { kind: 'aggregate', ref, method: method as AggregateMethod, alias: name, position };
  }

  /** `name ( "/" name )*`: a column, a computed name, or a path through relations to a column. */
  private ref(expected: string): ColumnRef {
    const names: NameToken[] = [];
    for (;;) {
      const token = this.next();
      if (token.kind !== 'word' && token.kind !== 'name') {
        throw syntaxError(token, names.length === 0 ? expected : 'a relation or a column');
      }
      names.push(token);
      // A `/` right after a name is a path's (one between steps follows `)`).
      if (this.peek().kind !== 'slash') break;
      this.next();
    }
    const first = names[0] as NameToken;
    const last = names[names.length - 1] as NameToken;
    const ref: ColumnRef = { kind: 'column', name: nameOf(last), position: first.position };
    return names.length === 1 ? ref : { ...ref, path: names.slice(0, -1).map(nameOf) };
  }

  /** The name after `as`: a word, or a name in double quotes. */
  private alias(): { name: string; position: number } {
    const token = this.next();
    if (token.kind !== 'word' && token.kind !== 'name') throw syntaxError(token, 'a name');
    return { name: nameOf(token), position: token.position };
  }
}

/** The name a word or a quoted name stands for. */
function nameOf(token: NameToken): string {
  return token.kind === 'name' ? token.value : token.text;
}
