// Turns the parser's CST into frozen AST nodes positioned at their first token; rejects what the
// grammar cannot (unknown auth_user attributes, integers outside the safe range, a third level of
// nested subqueries).

import type { CstNode, IToken } from 'chevrotain';
import {
  ast,
  type AuthAttribute,
  type ColumnRef,
  type CompareOp,
  type Expr,
  type LiteralNode,
  type Position,
} from './ast.js';
import { AUTH_ATTRIBUTE_DESCRIPTION, describeFound } from './error-messages.js';
import { policyParser } from './parser.js';
import { PolicySyntaxError } from './policy-syntax-error.js';

const AUTH_ATTRIBUTES: Readonly<Record<AuthAttribute, true>> = {
  id: true,
  username: true,
  is_admin: true,
  is_authenticated: true,
};
const isAuthAttribute = (name: string): name is AuthAttribute => Object.hasOwn(AUTH_ATTRIBUTES, name);

const OPERATORS: Readonly<Record<string, CompareOp>> = {
  Equals: '=',
  NotEquals: '!=',
  Less: '<',
  LessOrEqual: '<=',
  Greater: '>',
  GreaterOrEqual: '>=',
};

/** docs/policy-language.md: a subquery may hold one more, no deeper. */
export const MAX_SUBQUERY_DEPTH = 2;
const DEPTH_DESCRIPTION = `at most ${MAX_SUBQUERY_DEPTH} levels of nested subqueries`;

const SAFE_INTEGER_DESCRIPTION = `an integer between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`;

const positionOf = (token: IToken): Position =>
  Object.freeze({ offset: token.startOffset, line: token.startLine ?? 1, column: token.startColumn ?? 1 });

/** Where a rule's first token starts: the operand `(a)` starts at the parenthesis, not at `a`. */
const locationOf = (node: CstNode): Position =>
  Object.freeze({
    offset: node.location?.startOffset ?? 0,
    line: node.location?.startLine ?? 1,
    column: node.location?.startColumn ?? 1,
  });

type Children = Record<string, (CstNode | IToken)[] | undefined>;

const nodes = (children: Children, label: string): CstNode[] => (children[label] ?? []) as CstNode[];
const tokens = (children: Children, label: string): IToken[] => (children[label] ?? []) as IToken[];
const firstNode = (children: Children, label: string): CstNode | undefined => nodes(children, label)[0];
const firstToken = (children: Children, label: string): IToken | undefined => tokens(children, label)[0];

/** The parser only hands over complete CSTs, so a missing child is a bug in this file. */
function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`policy CST without ${what}`);
  return value;
}

/** A bare or double-quoted name as written: `"a""b"` is `a"b`. */
const nameOf = (token: IToken): string =>
  token.image.startsWith('"') ? token.image.slice(1, -1).replaceAll('""', '"') : token.image;

const BaseVisitor = policyParser.getBaseCstVisitorConstructor();

class CstToAst extends BaseVisitor {
  /** Subqueries open around the node being built; visiting is synchronous and never re-entered. */
  #depth = 0;

  constructor() {
    super();
    this.validateVisitor();
  }

  /** Builds a subquery's parts one level deeper; a third level is a syntax error at its keyword. */
  #nested<T>(keyword: IToken, build: () => T): T {
    if (this.#depth >= MAX_SUBQUERY_DEPTH) {
      throw PolicySyntaxError.expecting(DEPTH_DESCRIPTION, positionOf(keyword), describeFound(keyword.image));
    }
    this.#depth += 1;
    try {
      return build();
    } finally {
      this.#depth -= 1;
    }
  }

  /** The CST of a whole expression as its AST. */
  build(cst: CstNode): Expr {
    this.#depth = 0;
    return this.visit(cst) as Expr;
  }

  expression(children: Children): Expr {
    return this.visit(required(firstNode(children, 'orExpression'), 'or'));
  }

  orExpression(children: Children): Expr {
    const operands = nodes(children, 'operands');
    if (operands.length === 1) return this.visit(required(operands[0], 'operand'));
    return ast.or(
      operands.map((n): Expr => this.visit(n)),
      locationOf(required(operands[0], 'operand')),
    );
  }

  andExpression(children: Children): Expr {
    const operands = nodes(children, 'operands');
    if (operands.length === 1) return this.visit(required(operands[0], 'operand'));
    return ast.and(
      operands.map((n): Expr => this.visit(n)),
      locationOf(required(operands[0], 'operand')),
    );
  }

  unaryExpression(children: Children): Expr {
    const not = firstToken(children, 'not');
    if (not !== undefined)
      return ast.not(this.visit(required(firstNode(children, 'operand'), 'operand')), positionOf(not));
    return this.visit(required(firstNode(children, 'comparison'), 'comparison'));
  }

  comparison(children: Children): Expr {
    const exists = firstNode(children, 'exists');
    if (exists !== undefined) return this.visit(exists);
    return this.visit(required(firstNode(children, 'operandComparison'), 'comparison'));
  }

  existsSubquery(children: Children): Expr {
    const keyword = required(firstToken(children, 'Exists'), 'exists');
    const tableNode = required(firstNode(children, 'table'), 'table');
    return this.#nested(required(firstToken(children, 'Select'), 'select'), () =>
      ast.exists(
        this.visit(tableNode),
        this.visit(required(firstNode(children, 'where'), 'where')),
        positionOf(keyword),
        locationOf(tableNode),
      ),
    );
  }

  selectSubquery(children: Children, left: { operand: Expr; negated: boolean; pos: Position }): Expr {
    const tableNode = required(firstNode(children, 'table'), 'table');
    return this.#nested(required(firstToken(children, 'Select'), 'select'), () => {
      const where = firstNode(children, 'where');
      return ast.inSelect(
        left.operand,
        this.visit(required(firstNode(children, 'column'), 'column')),
        this.visit(tableNode),
        where === undefined ? ast.anyone(locationOf(tableNode)) : this.visit(where),
        left.negated,
        left.pos,
        locationOf(tableNode),
      );
    });
  }

  tableName(children: Children): string {
    return nameOf(required(firstToken(children, 'name'), 'table name'));
  }

  columnReference(children: Children): ColumnRef {
    const first = required(firstToken(children, 'first'), 'column');
    const second = firstToken(children, 'second');
    return second === undefined
      ? ast.column(nameOf(first), positionOf(first))
      : ast.qualifiedColumn(nameOf(first), nameOf(second), positionOf(first));
  }

  operandComparison(children: Children): Expr {
    const leftNode = required(firstNode(children, 'left'), 'left');
    const left: Expr = this.visit(leftNode);
    const pos = locationOf(leftNode);
    const operator = firstNode(children, 'operator');
    if (operator !== undefined) {
      const right: Expr = this.visit(required(firstNode(children, 'right'), 'right'));
      return ast.compare(this.visit(operator), left, right, pos);
    }
    if (firstToken(children, 'is') !== undefined)
      return ast.isNull(left, firstToken(children, 'isNot') !== undefined, pos);
    if (firstToken(children, 'in') !== undefined) {
      const negated = firstToken(children, 'inNot') !== undefined;
      const select = firstNode(children, 'select');
      if (select !== undefined) return this.visit(select, { operand: left, negated, pos });
      const values = nodes(children, 'values').map((n): LiteralNode => this.visit(n));
      return ast.in(left, values, negated, pos);
    }
    return left;
  }

  compareOperator(children: Children): CompareOp {
    const name = Object.keys(children).find((k) => (children[k]?.length ?? 0) > 0);
    return required(OPERATORS[name ?? ''], 'operator');
  }

  operand(children: Children): Expr {
    const auth = firstNode(children, 'auth');
    if (auth !== undefined) return this.visit(auth);
    const column = firstNode(children, 'column');
    if (column !== undefined) return this.visit(column);
    const literal = firstNode(children, 'literal');
    if (literal !== undefined) return this.visit(literal);
    return this.visit(required(firstNode(children, 'nested'), 'nested expression'));
  }

  authReference(children: Children): Expr {
    const start = positionOf(required(firstToken(children, 'AuthUser'), 'auth_user'));
    const attribute = required(firstToken(children, 'attribute'), 'attribute');
    const claim = firstToken(children, 'claim');
    const name = attribute.image.toLowerCase();
    if (claim !== undefined && name === 'claims') return ast.claim(claim.image, start);
    if (claim === undefined && isAuthAttribute(name)) return ast.auth(name, start);
    const written = claim === undefined ? attribute.image : `${attribute.image}.${claim.image}`;
    throw PolicySyntaxError.expecting(
      `${AUTH_ATTRIBUTE_DESCRIPTION} after 'auth_user.'`,
      positionOf(attribute),
      describeFound(written),
    );
  }

  literal(children: Children): LiteralNode {
    const [name, list] = Object.entries(children).find(([, v]) => (v?.length ?? 0) > 0) ?? [];
    const token = required(list?.[0] as IToken | undefined, 'literal token');
    const pos = positionOf(token);
    switch (name) {
      case 'IntegerLiteral': {
        const value = Number(token.image);
        if (!Number.isSafeInteger(value))
          throw PolicySyntaxError.expecting(SAFE_INTEGER_DESCRIPTION, pos, describeFound(token.image));
        // `-0` reads as 0: the AST has one zero, so printing and comparing stay simple.
        return ast.integer(value === 0 ? 0 : value, pos);
      }
      case 'DecimalLiteral': {
        const value = Number(token.image);
        return ast.decimal(value === 0 ? 0 : value, pos);
      }
      case 'StringLiteral':
        return ast.string(token.image.slice(1, -1).replaceAll("''", "'"), pos);
      case 'True':
        return ast.boolean(true, pos);
      case 'False':
        return ast.boolean(false, pos);
      case 'Null':
        return ast.null(pos);
      default:
        throw new Error(`policy CST with an unknown literal ${name ?? ''}`);
    }
  }
}

/** The one visitor instance: `cstToAst.visit(cst)` returns the Expr. */
export const cstToAst = new CstToAst();
