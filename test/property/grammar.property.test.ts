import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { children, type Expr } from '../../grammar/ast.js';
import { MAX_EXPRESSION_LENGTH, parsePolicy, positionAt } from '../../grammar/parse-policy.js';
import { PolicySyntaxError } from '../../grammar/policy-syntax-error.js';
import { printPolicy } from '../../grammar/print-policy.js';
import { policyArbitrary, stripPositions } from '../support/policy-arbitraries.js';
import { relationExprArbitrary } from '../support/relation-arbitraries.js';

/** Pieces of policy text, valid and invalid, from which token soups are built. */
const fragments = [
  'and',
  'AND',
  'or',
  'Or',
  'not',
  'NOT',
  'is',
  'in',
  'null',
  'true',
  'false',
  'auth_user',
  'AUTH_USER',
  '.',
  'id',
  'claims',
  'is_admin',
  'username',
  'is_authenticated',
  'auth_user.claims.',
  'exists',
  'EXISTS',
  'select',
  'Select',
  'from',
  'where',
  'WHERE',
  't.c',
  '"t"."c"',
  '(',
  ')',
  ',',
  '=',
  '!=',
  '<>',
  '<',
  '<=',
  '>',
  '>=',
  "'x'",
  "'it''s'",
  "'",
  '"c"',
  '"a""b"',
  '""',
  '"',
  '12',
  '-3',
  '4.5',
  '-0',
  '9007199254740993',
  '1.',
  '.5',
  'col',
  'notes',
  ' ',
  '\n',
  '\r\n',
  '\t',
  '#',
  '-',
  '!',
  '\u0000',
  '\u200b',
  'é',
  '😀',
];

const fits = (text: string): boolean => [...text].length <= MAX_EXPRESSION_LENGTH;

/** Every node of the tree, root first. */
function allNodes(e: Expr): Expr[] {
  return [e, ...children(e).flatMap(allNodes)];
}

/** parsePolicy either returns or throws a PolicySyntaxError whose position is inside the text. */
function parseOrSyntaxError(text: string): void {
  try {
    parsePolicy(text);
  } catch (e) {
    if (!(e instanceof PolicySyntaxError)) throw e;
    expect(e.offset).toBeLessThanOrEqual(text.length);
    expect(positionAt(text, e.offset)).toEqual({ offset: e.offset, line: e.line, column: e.column });
    expect(e.message).toContain(`${e.line}:${e.column}`);
    expect(e.details).toEqual({ line: e.line, column: e.column, expected: e.expected, found: e.found });
  }
}

describe('grammar properties', () => {
  it('parses the printed text of any AST back to the same AST', () => {
    fc.assert(
      fc.property(policyArbitrary(), (e) => {
        const text = printPolicy(e);
        fc.pre(fits(text));
        expect(stripPositions(parsePolicy(text))).toEqual(stripPositions(e));
      }),
      { numRuns: 1000 },
    );
  });

  it('parses the printed text of any AST with subqueries and qualified columns back to the same AST', () => {
    fc.assert(
      fc.property(relationExprArbitrary(), (e) => {
        const text = printPolicy(e);
        fc.pre(fits(text));
        expect(stripPositions(parsePolicy(text))).toEqual(stripPositions(e));
        expect(printPolicy(parsePolicy(text))).toBe(text);
        for (const node of allNodes(parsePolicy(text))) {
          expect(positionAt(text, node.pos.offset)).toEqual(node.pos);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('prints a parsed canonical text unchanged', () => {
    fc.assert(
      fc.property(policyArbitrary(), (e) => {
        const text = printPolicy(e);
        fc.pre(fits(text));
        expect(printPolicy(parsePolicy(text))).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('positions every node at a place in the text, with line and column matching the offset', () => {
    fc.assert(
      fc.property(policyArbitrary(), (e) => {
        const text = printPolicy(e);
        fc.pre(fits(text) && text !== '');
        for (const node of allNodes(parsePolicy(text))) {
          expect(node.pos.offset).toBeLessThan(text.length);
          expect(positionAt(text, node.pos.offset)).toEqual(node.pos);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('throws nothing but a positioned PolicySyntaxError on random strings', () => {
    fc.assert(fc.property(fc.string({ maxLength: 140, unit: 'binary' }), parseOrSyntaxError), {
      numRuns: 2000,
    });
  });

  it('throws nothing but a positioned PolicySyntaxError on random token soups', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...fragments), { maxLength: 40 }), fc.boolean(), (parts, spaced) =>
        parseOrSyntaxError(parts.join(spaced ? ' ' : '')),
      ),
      { numRuns: 4000 },
    );
  });
});
