/**
 * The one walker over parsed filters: calls back for each column reference (the column of a
 * function call too), each literal and each lambda, in text order. A lambda's body is walked
 * too unless a `lambda` callback is given (its columns are the related rows').
 */
import type { ColumnExpr, ColumnRef, FilterExpr, FilterLiteral, Lambda, Operand } from './ast.js';

export interface FilterVisitor {
  column?(ref: ColumnRef): void;
  literal?(literal: FilterLiteral): void;
  lambda?(lambda: Lambda): void;
}

export function visitFilterColumns(expr: FilterExpr, visitor: FilterVisitor): void {
  const columnExpr = (operand: ColumnExpr) =>
    visitor.column?.(operand.kind === 'column' ? operand : operand.column);
  const operand = (value: Operand) => {
    if (value.kind === 'column' || value.kind === 'call') columnExpr(value);
    else visitor.literal?.(value);
  };
  switch (expr.kind) {
    case 'or':
    case 'and':
      for (const item of expr.items) visitFilterColumns(item, visitor);
      return;
    case 'not':
      visitFilterColumns(expr.expr, visitor);
      return;
    case 'compare':
      operand(expr.left);
      operand(expr.right);
      return;
    case 'in':
      columnExpr(expr.column);
      for (const value of expr.values) visitor.literal?.(value);
      return;
    case 'match':
      columnExpr(expr.column);
      if (typeof expr.value !== 'string') visitor.literal?.(expr.value);
      return;
    case 'lambda':
      if (visitor.lambda !== undefined) visitor.lambda(expr);
      else if (expr.expr !== null) visitFilterColumns(expr.expr, visitor);
      return;
  }
}
