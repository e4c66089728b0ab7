/**
 * `$filter` text → FilterExpr, by recursive descent over the grammar of docs/filters.md:
 * `or` < `and` < `not` < primary. Knows no schema. Enforces the limits (bytes, nesting, `in`
 * values, pattern characters, function calls) while parsing, so recursion never goes deeper than the nesting limit and every failure
 * is an ApiError naming the 1-based position and what was expected there.
 */
import { filterSyntax, limitExceeded, singleQuotesHint } from '../errors.js';
import {
  MAX_FILTER_BYTES,
  MAX_FILTER_CALLS,
  MAX_IN_VALUES,
  MAX_NESTING,
  MAX_PATTERN_CHARS,
} from '../limits.js';
import {
  COLUMN_FNS,
  type ColumnExpr,
  type ColumnFn,
  type ColumnRef,
  type CompareOp,
  type FilterExpr,
  type FilterLiteral,
  type Lambda,
  type MatchFn,
  type Operand,
} from './ast.js';
import {
  asciiKeyword,
  excerpt,
  keywordLiteral,
  type LexOptions,
  type Token,
  tokenize,
} from './lexer.js';
import { TokenCursor } from './token-cursor.js';

const COMPARE_OPS: ReadonlySet<string> = new Set<CompareOp>(['eq', 'ne', 'lt', 'le', 'gt', 'ge']);
const MATCH_FNS: ReadonlySet<string> = new Set<MatchFn>(['contains', 'startswith', 'endswith']);
const CALL_FNS: ReadonlySet<string> = new Set<ColumnFn>(COLUMN_FNS);
// Words that always mean the grammar, never a column: a column named like one of these (or like
// true/false/null, which are literals) cannot appear in a filter. Function names stay usable as
// column names because a function is recognised only when `(` follows.
const RESERVED: ReadonlySet<string> = new Set(['and', 'or', 'not', 'in', ...COMPARE_OPS]);

const EXPECT_CONDITION =
  "a condition (a column, a value, 'not', '(' or contains/startswith/endswith)";
const EXPECT_OPERAND = 'a column or a value';
const EXPECT_LITERAL = 'a value (a string, a number, a date or time, true, false or null)';
const FUNCTION_NAMES = ['contains', 'startswith', 'endswith', ...COLUMN_FNS].join(', ');

/** A token as a message names it; `end` says what ends there (`end of filter`). */
export function describe(token: Token, end = 'end of filter'): string {
  switch (token.kind) {
    case 'word':
    case 'number':
    case 'temporal':
    case 'parameter':
    case 'lparen':
    case 'rparen':
    case 'comma':
    case 'slash':
    case 'colon':
      return `'${excerpt(token.text)}'`;
    case 'string':
      return `the string ${excerpt(token.text)}`;
    case 'name':
      return `the name ${excerpt(token.text)}`;
    case 'invalid':
      return token.problem;
    case 'end':
      return end;
  }
}

function syntaxError(token: Token, expected: string) {
  if (token.kind === 'invalid' && token.fatal === true) return filterSyntax(token.problem);
  return filterSyntax(
    `Invalid $filter at position ${token.position}: expected ${expected}, found ${describe(token)}`,
  );
}

/**
 * Parses `$filter` text (a policy's where with `parameters`: `@user.id` …). Throws only ApiError
 * (FILTER_SYNTAX or LIMIT_EXCEEDED).
 */
export function parseFilter(text: string, options: LexOptions = {}): FilterExpr {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_FILTER_BYTES) {
    throw limitExceeded(
      `$filter is ${bytes} bytes long; the limit is ${MAX_FILTER_BYTES} bytes (UTF-8)`,
    );
  }
  return new Parser(tokenize(text, options), newBudget(), 0).parse();
}

/**
 * Runs `parse`; a filter's messages (`Invalid $filter at position …`) then name `where` instead:
 * a filter nested in another option, whose positions are counted in that option's text or in
 * the nested filter's own.
 */
export function placed<T>(where: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('Invalid $filter ')) {
      error.message = error.message.replace('Invalid $filter', `Invalid ${where}`);
    }
    throw error;
  }
}

/**
 * What a filter may still spend: one per `$filter` (and policy where); `$apply` shares one
 * between its filter() steps and compute() functions.
 */
export interface FilterBudget {
  /** Characters of contains/startswith/endswith patterns so far (MAX_PATTERN_CHARS). */
  patternChars: number;
  /** contains/startswith/endswith and column functions so far (MAX_FILTER_CALLS). */
  calls: number;
}

export const newBudget = (): FilterBudget => ({ patternChars: 0, calls: 0 });

/**
 * A filter inside a larger text (`$apply`'s `filter(…)`, lexed as a whole): parsed from
 * `tokens[start]` up to the first token that cannot continue it, whose index is `next`.
 */
export function parseFilterTokens(
  tokens: readonly Token[],
  start: number,
  budget: FilterBudget,
): { expr: FilterExpr; next: number } {
  const parser = new Parser(tokens, budget, start);
  return { expr: parser.parseOr(0), next: parser.position };
}

/** Counts a call, at its function name (the cost of a filter: MAX_FILTER_CALLS). */
export function countCall(budget: FilterBudget, name: Token): void {
  budget.calls++;
  if (budget.calls > MAX_FILTER_CALLS) {
    throw limitExceeded(
      `Invalid $filter at position ${name.position}: more than ${MAX_FILTER_CALLS} function calls; each contains, startswith, endswith and column function (tolower, year, …) counts one`,
    );
  }
}

class Parser extends TokenCursor {
  constructor(
    tokens: readonly Token[],
    private readonly budget: FilterBudget,
    index: number,
  ) {
    super(tokens, index);
  }

  parse(): FilterExpr {
    const expr = this.parseOr(0);
    const next = this.peek();
    if (next.kind !== 'end') throw syntaxError(next, "'and', 'or' or end of filter");
    return expr;
  }

  private isKeyword(token: Token, keyword: string): boolean {
    return token.kind === 'word' && asciiKeyword(token.text) === keyword;
  }

  private expect(kind: 'lparen' | 'rparen' | 'comma' | 'colon', expected: string): void {
    const token = this.next();
    if (token.kind !== kind) throw syntaxError(token, expected);
  }

  /** Called on entering a parenthesis or `not`; `depth` counts both. */
  private enter(depth: number, token: Token): number {
    const inner = depth + 1;
    if (inner > MAX_NESTING) {
      throw limitExceeded(
        `Invalid $filter at position ${token.position}: nesting deeper than ${MAX_NESTING} levels (parentheses and 'not' both count)`,
      );
    }
    return inner;
  }

  parseOr(depth: number): FilterExpr {
    return this.parseChain('or', depth, (d) => this.parseAnd(d));
  }

  private parseAnd(depth: number): FilterExpr {
    return this.parseChain('and', depth, (d) => this.parseNot(d));
  }

  /** `item ( keyword item )*`: one n-ary node, or the item alone. */
  private parseChain(
    keyword: 'and' | 'or',
    depth: number,
    parseItem: (depth: number) => FilterExpr,
  ): FilterExpr {
    const items = [parseItem(depth)];
    while (this.isKeyword(this.peek(), keyword)) {
      this.next();
      items.push(parseItem(depth));
    }
    return items.length === 1 ? (items[0] as FilterExpr) : { kind: keyword, items };
  }

  private parseNot(depth: number): FilterExpr {
    const token = this.peek();
    if (this.isKeyword(token, 'not')) {
      this.next();
      return { kind: 'not', expr: this.parseNot(this.enter(depth, token)) };
    }
    return this.parsePrimary(depth);
  }

  private parsePrimary(depth: number): FilterExpr {
    const token = this.peek();
    if (token.kind === 'lparen') {
      this.next();
      const expr = this.parseOr(this.enter(depth, token));
      this.expect('rparen', "'and', 'or' or ')'");
      return expr;
    }
    if (token.kind === 'word' && this.peek(1).kind === 'lparen') {
      const fn = asciiKeyword(token.text);
      if (fn !== null && MATCH_FNS.has(fn)) return this.parseMatch(fn as MatchFn);
    }
    const left = this.parseOperand(EXPECT_CONDITION, depth);
    if (left.kind === 'lambda') return left;
    const opToken = this.next();
    const op = opToken.kind === 'word' ? asciiKeyword(opToken.text) : null;
    if (op !== null && COMPARE_OPS.has(op)) {
      const rightToken = this.peek();
      const right = this.parseOperand(EXPECT_OPERAND, depth);
      if (right.kind === 'lambda') throw syntaxError(rightToken, EXPECT_OPERAND);
      return { kind: 'compare', op: op as CompareOp, left, right, position: opToken.position };
    }
    if (op === 'in' && (left.kind === 'column' || left.kind === 'call')) {
      return this.parseIn(left);
    }
    throw syntaxError(
      opToken,
      left.kind === 'column' || left.kind === 'call'
        ? 'an operator (eq, ne, lt, le, gt, ge or in)'
        : 'an operator (eq, ne, lt, le, gt or ge)',
    );
  }

  /** `column in ( literal ( , literal )* )`, the column (or function of one) already read. */
  private parseIn(column: ColumnExpr): FilterExpr {
    this.expect('lparen', "'(' after 'in'");
    const values: FilterLiteral[] = [];
    for (;;) {
      const token = this.peek();
      const value = this.parseLiteral();
      if (values.length === MAX_IN_VALUES) {
        throw limitExceeded(
          `Invalid $filter at position ${token.position}: more than ${MAX_IN_VALUES} values in an 'in' list`,
        );
      }
      values.push(value);
      const separator = this.next();
      if (separator.kind === 'rparen') return { kind: 'in', column, values };
      if (separator.kind !== 'comma') throw syntaxError(separator, "',' or ')'");
    }
  }

  /** `fn ( column , 'string' )`, positioned on the function name; the column may be `fn(column)`. */
  private parseMatch(fn: MatchFn): FilterExpr {
    countCall(this.budget, this.next());
    this.next(); // `(`, checked by the caller
    const token = this.peek();
    const column =
      token.kind === 'word' && this.peek(1).kind === 'lparen'
        ? this.parseCall(token)
        : this.parseColumn('a column');
    this.expect('comma', "','");
    const value = this.next();
    if (value.kind === 'parameter') {
      this.expect('rparen', "')'");
      return { kind: 'match', fn, column, value: { kind: 'user', field: value.field } };
    }
    if (value.kind !== 'string') throw syntaxError(value, 'a string in single quotes');
    this.countPattern(value);
    this.expect('rparen', "')'");
    return { kind: 'match', fn, column, value: value.value };
  }

  /** `fn ( column )`, positioned on the function name (a word followed by `(`). */
  private parseCall(token: Extract<Token, { kind: 'word' }>): ColumnExpr {
    const fn = asciiKeyword(token.text);
    if (fn === null || !CALL_FNS.has(fn)) {
      throw filterSyntax(
        `Invalid $filter at position ${token.position}: unknown function '${excerpt(token.text)}'; the functions are ${FUNCTION_NAMES}`,
      );
    }
    countCall(this.budget, this.next());
    this.next(); // `(`, checked by the caller
    const argument = this.peek();
    if (argument.kind === 'word' && this.peek(1).kind === 'lparen') {
      throw syntaxError(argument, `a column (${fn} takes a column, not another function)`);
    }
    const column = this.parseColumn('a column');
    this.expect('rparen', "')'");
    return { kind: 'call', fn: fn as ColumnFn, column, position: token.position };
  }

  /**
   * MySQL matches `LIKE '%…%'` by trying the pattern at every position of every row: the cost
   * grows with the pattern's length (bench/README.md, "Measurements behind limits").
   */
  private countPattern(token: Extract<Token, { kind: 'string' }>): void {
    for (const _ of token.value) this.budget.patternChars++;
    if (this.budget.patternChars > MAX_PATTERN_CHARS) {
      throw limitExceeded(
        `Invalid $filter at position ${token.position}: contains, startswith and endswith patterns may have at most ${MAX_PATTERN_CHARS} characters in all`,
      );
    }
  }

  /** A literal, a column or a path to one, `fn(column)`, or a lambda (`items/any(…)`). */
  private parseOperand(expected: string, depth: number): Operand | Lambda {
    const token = this.peek();
    if (token.kind === 'word' && this.peek(1).kind === 'lparen') return this.parseCall(token);
    switch (token.kind) {
      case 'string':
        this.next();
        return { kind: 'string', value: token.value };
      case 'number':
        this.next();
        return { kind: 'number', text: token.text };
      case 'temporal':
        this.next();
        return token.literal;
      case 'parameter':
        this.next();
        return { kind: 'user', field: token.field };
      case 'word': {
        const literal = keywordLiteral(token.text);
        if (literal === null) return this.parsePath(expected, depth);
        this.next();
        return literal;
      }
      case 'name':
        return this.parsePath(expected, depth);
      default:
        this.next();
        throw syntaxError(token, expected);
    }
  }

  /**
   * `name ( "/" name )*`, positioned on its first name: a column, a path through relations to
   * one (`customer/country`), or, when the last name is `any` or `all` followed by `(`, a lambda.
   */
  private parsePath(expected: string, depth: number): ColumnRef | Lambda {
    const names: Extract<Token, { kind: 'word' | 'name' }>[] = [];
    for (;;) {
      const token = this.next();
      if (token.kind === 'name') names.push(token);
      else if (token.kind === 'word' && keywordLiteral(token.text) === null) {
        const lambda = names.length > 0 ? asciiKeyword(token.text) : null;
        if ((lambda === 'any' || lambda === 'all') && this.peek().kind === 'lparen') {
          return this.parseLambda(lambda, names, token.position, depth);
        }
        names.push(token);
      } else throw syntaxError(token, names.length === 0 ? expected : 'a relation or a column');
      if (this.peek().kind !== 'slash') break;
      this.next();
    }
    const last = names[names.length - 1] as (typeof names)[number];
    if (names.length === 1) return this.columnFrom(last, expected);
    return {
      kind: 'column',
      name: nameOf(last),
      position: (names[0] as Token).position,
      path: names.slice(0, -1).map(nameOf),
    };
  }

  /**
   * `any ( [ variable ":" condition ] )` or `all ( variable ":" condition )`, positioned on `(`.
   * The condition counts one level of nesting, as parentheses do.
   */
  private parseLambda(
    op: 'any' | 'all',
    path: readonly Extract<Token, { kind: 'word' | 'name' }>[],
    position: number,
    depth: number,
  ): Lambda {
    const open = this.next();
    const lambda = { kind: 'lambda', op, path: path.map(nameOf), position } as const;
    if (op === 'any' && this.peek().kind === 'rparen') {
      this.next();
      return { ...lambda, variable: null, expr: null };
    }
    // A name as a column is written without quotes, not starting with a digit, not a word of the
    // grammar: OData clients name the variable after the relation (odata-query writes
    // `order_items/any(order_items:order_items/qty gt 5)`).
    const variable = this.next();
    if (
      variable.kind !== 'word' ||
      keywordLiteral(variable.text) !== null ||
      RESERVED.has(asciiKeyword(variable.text) ?? '') ||
      /^[0-9]/.test(variable.text)
    ) {
      throw syntaxError(variable, `a variable name (${op}(x: …))`);
    }
    this.expect('colon', "':' after the variable");
    const expr = this.parseOr(this.enter(depth, open));
    this.expect('rparen', "'and', 'or' or ')'");
    return { ...lambda, variable: variable.text, expr };
  }

  private parseLiteral(): FilterLiteral {
    const token = this.next();
    switch (token.kind) {
      case 'string':
        return { kind: 'string', value: token.value };
      case 'number':
        return { kind: 'number', text: token.text };
      case 'temporal':
        return token.literal;
      case 'parameter':
        return { kind: 'user', field: token.field };
      case 'word': {
        const literal = keywordLiteral(token.text);
        if (literal !== null) return literal;
        throw syntaxError(token, EXPECT_LITERAL);
      }
      case 'name': {
        // Only a value may stand here, so a double-quoted one was meant as a string.
        const { message } = syntaxError(token, EXPECT_LITERAL);
        throw filterSyntax(`${message}${singleQuotesHint(token.value)}`);
      }
      default:
        throw syntaxError(token, EXPECT_LITERAL);
    }
  }

  /** A column or a path to one; never a lambda. */
  private parseColumn(expected: string): ColumnRef {
    const token = this.peek();
    const named =
      token.kind === 'name' || (token.kind === 'word' && keywordLiteral(token.text) === null);
    if (!named) {
      this.next();
      throw syntaxError(token, expected);
    }
    const column = this.parsePath(expected, 0);
    if (column.kind === 'lambda') throw syntaxError(token, expected);
    return column;
  }

  private columnFrom(
    token: Extract<Token, { kind: 'word' | 'name' }>,
    expected: string,
  ): ColumnRef {
    if (token.kind === 'name')
      return { kind: 'column', name: token.value, position: token.position, quoted: true };
    const keyword = asciiKeyword(token.text);
    if (keyword !== null && RESERVED.has(keyword)) throw syntaxError(token, expected);
    return { kind: 'column', name: token.text, position: token.position };
  }
}

/** The name a word or a quoted name stands for. */
function nameOf(token: Extract<Token, { kind: 'word' | 'name' }>): string {
  return token.kind === 'name' ? token.value : token.text;
}
