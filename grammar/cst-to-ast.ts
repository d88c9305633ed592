// Turns the parser's CST into frozen AST nodes positioned at their first token; rejects what the
// grammar cannot (unknown auth_user attributes, integers outside the safe range).

import type { CstNode, IToken } from 'chevrotain';
import {
  ast,
  type AuthAttribute,
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

const BaseVisitor = policyParser.getBaseCstVisitorConstructor();

class CstToAst extends BaseVisitor {
  constructor() {
    super();
    this.validateVisitor();
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
      const values = nodes(children, 'values').map((n): LiteralNode => this.visit(n));
      return ast.in(left, values, firstToken(children, 'inNot') !== undefined, pos);
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
    const column = firstToken(children, 'column');
    if (column !== undefined) return ast.column(column.image, positionOf(column));
    const quoted = firstToken(children, 'quotedColumn');
    if (quoted !== undefined)
      return ast.column(quoted.image.slice(1, -1).replaceAll('""', '"'), positionOf(quoted));
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
