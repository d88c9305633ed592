// The policy grammar (docs/policy-language.md), grammar only; the CST→AST visitor lives in cst-to-ast.ts.
//
//   expr    := or ;  or := and ("or" and)* ;  and := unary ("and" unary)*
//   unary   := "not" unary | compare
//   compare := operand [ ("=" | "!=" | "<>" | "<" | "<=" | ">" | ">=") operand ]
//            | operand "is" ["not"] "null"
//            | operand ["not"] "in" "(" literal ("," literal)* ")"
//            | operand ["not"] "in" "(" "select" column "from" table ["where" expr] ")"
//            | "exists" "(" "select" "from" table "where" expr ")"
//   operand := column | auth_user.<attr> | auth_user.claims.<name> | literal | "(" expr ")"
//   literal := integer | decimal | 'string' | true | false | null
//   column  := name ["." name]            -- table.column
//   table   := name
//   name    := identifier | "double-quoted name"
//
// `not exists (…)` is `not` applied to `exists (…)`. cst-to-ast.ts allows two levels of subqueries.
// `auth_user.<attr>` reads any word after the dot (keywords too, so a claim may be called `in`);
// cst-to-ast.ts rejects attributes other than id, username, is_admin, is_authenticated, claims.<name>.

import { CstParser } from 'chevrotain';
import {
  AUTH_ATTRIBUTE_DESCRIPTION,
  CLAIM_NAME_DESCRIPTION,
  errorMessageProvider,
  LITERAL_DESCRIPTION,
  COLUMN_DESCRIPTION,
  IN_LIST_DESCRIPTION,
  OPERAND_DESCRIPTION,
  TABLE_DESCRIPTION,
} from './error-messages.js';
import * as t from './tokens.js';

export class PolicyParser extends CstParser {
  /**
   * `validate` runs chevrotain's grammar checks (ambiguities, left recursion, duplicate rules;
   * a grammar that fails them throws here): test/unit/grammar/grammar-definition.test.ts does,
   * every process skips them (some 20 ms of each start) for a grammar that cannot change.
   */
  constructor(options: { readonly validate: boolean }) {
    super([...t.allTokens], {
      maxLookahead: 3,
      errorMessageProvider,
      nodeLocationTracking: 'full',
      skipValidations: !options.validate,
    });
    this.performSelfAnalysis();
  }

  readonly expression = this.RULE('expression', () => {
    this.SUBRULE(this.orExpression);
  });

  readonly orExpression = this.RULE('orExpression', () => {
    this.SUBRULE(this.andExpression, { LABEL: 'operands' });
    this.MANY(() => {
      this.CONSUME(t.Or);
      this.SUBRULE2(this.andExpression, { LABEL: 'operands' });
    });
  });

  readonly andExpression = this.RULE('andExpression', () => {
    this.SUBRULE(this.unaryExpression, { LABEL: 'operands' });
    this.MANY(() => {
      this.CONSUME(t.And);
      this.SUBRULE2(this.unaryExpression, { LABEL: 'operands' });
    });
  });

  readonly unaryExpression = this.RULE('unaryExpression', () => {
    this.OR({
      DEF: [
        {
          ALT: () => {
            this.CONSUME(t.Not, { LABEL: 'not' });
            this.SUBRULE(this.unaryExpression, { LABEL: 'operand' });
          },
        },
        { ALT: () => this.SUBRULE(this.comparison, { LABEL: 'comparison' }) },
      ],
      ERR_MSG: OPERAND_DESCRIPTION,
    });
  });

  readonly comparison = this.RULE('comparison', () => {
    this.OR({
      DEF: [
        { ALT: () => this.SUBRULE(this.existsSubquery, { LABEL: 'exists' }) },
        { ALT: () => this.SUBRULE(this.operandComparison, { LABEL: 'operandComparison' }) },
      ],
      ERR_MSG: OPERAND_DESCRIPTION,
    });
  });

  readonly existsSubquery = this.RULE('existsSubquery', () => {
    this.CONSUME(t.Exists);
    this.CONSUME(t.LParen);
    this.CONSUME(t.Select);
    this.CONSUME(t.From);
    this.SUBRULE(this.tableName, { LABEL: 'table' });
    this.CONSUME(t.Where);
    this.SUBRULE(this.expression, { LABEL: 'where' });
    this.CONSUME(t.RParen);
  });

  readonly operandComparison = this.RULE('operandComparison', () => {
    this.SUBRULE(this.operand, { LABEL: 'left' });
    this.OPTION(() => {
      this.OR([
        {
          ALT: () => {
            this.SUBRULE(this.compareOperator, { LABEL: 'operator' });
            this.SUBRULE2(this.operand, { LABEL: 'right' });
          },
        },
        {
          ALT: () => {
            this.CONSUME(t.Is, { LABEL: 'is' });
            this.OPTION2(() => this.CONSUME(t.Not, { LABEL: 'isNot' }));
            this.CONSUME(t.Null);
          },
        },
        {
          ALT: () => {
            this.OPTION3(() => this.CONSUME2(t.Not, { LABEL: 'inNot' }));
            this.CONSUME(t.In, { LABEL: 'in' });
            this.CONSUME(t.LParen);
            this.OR2({
              DEF: [
                { ALT: () => this.SUBRULE(this.selectSubquery, { LABEL: 'select' }) },
                {
                  ALT: () => {
                    this.SUBRULE(this.literal, { LABEL: 'values' });
                    this.MANY(() => {
                      this.CONSUME(t.Comma);
                      this.SUBRULE2(this.literal, { LABEL: 'values' });
                    });
                  },
                },
              ],
              ERR_MSG: IN_LIST_DESCRIPTION,
            });
            this.CONSUME(t.RParen);
          },
        },
      ]);
    });
  });

  readonly selectSubquery = this.RULE('selectSubquery', () => {
    this.CONSUME(t.Select);
    this.SUBRULE(this.columnReference, { LABEL: 'column' });
    this.CONSUME(t.From);
    this.SUBRULE(this.tableName, { LABEL: 'table' });
    this.OPTION(() => {
      this.CONSUME(t.Where);
      this.SUBRULE(this.expression, { LABEL: 'where' });
    });
  });

  readonly tableName = this.RULE('tableName', () => {
    this.OR({
      DEF: [
        { ALT: () => this.CONSUME(t.Identifier, { LABEL: 'name' }) },
        { ALT: () => this.CONSUME(t.QuotedIdentifier, { LABEL: 'name' }) },
      ],
      ERR_MSG: TABLE_DESCRIPTION,
    });
  });

  /** `name` or `table.name`; each part bare or double-quoted. */
  readonly columnReference = this.RULE('columnReference', () => {
    this.OR({
      DEF: [
        { ALT: () => this.CONSUME(t.Identifier, { LABEL: 'first' }) },
        { ALT: () => this.CONSUME(t.QuotedIdentifier, { LABEL: 'first' }) },
      ],
      ERR_MSG: COLUMN_DESCRIPTION,
    });
    this.OPTION(() => {
      this.CONSUME(t.Dot);
      this.OR2({
        DEF: [
          { ALT: () => this.CONSUME2(t.Identifier, { LABEL: 'second' }) },
          { ALT: () => this.CONSUME2(t.QuotedIdentifier, { LABEL: 'second' }) },
        ],
        ERR_MSG: COLUMN_DESCRIPTION,
      });
    });
  });

  readonly compareOperator = this.RULE('compareOperator', () => {
    this.OR([
      { ALT: () => this.CONSUME(t.Equals) },
      { ALT: () => this.CONSUME(t.NotEquals) },
      { ALT: () => this.CONSUME(t.LessOrEqual) },
      { ALT: () => this.CONSUME(t.GreaterOrEqual) },
      { ALT: () => this.CONSUME(t.Less) },
      { ALT: () => this.CONSUME(t.Greater) },
    ]);
  });

  readonly operand = this.RULE('operand', () => {
    this.OR({
      DEF: [
        { ALT: () => this.SUBRULE(this.authReference, { LABEL: 'auth' }) },
        { ALT: () => this.SUBRULE(this.columnReference, { LABEL: 'column' }) },
        { ALT: () => this.SUBRULE(this.literal, { LABEL: 'literal' }) },
        {
          ALT: () => {
            this.CONSUME(t.LParen);
            this.SUBRULE(this.expression, { LABEL: 'nested' });
            this.CONSUME(t.RParen);
          },
        },
      ],
      ERR_MSG: OPERAND_DESCRIPTION,
    });
  });

  readonly authReference = this.RULE('authReference', () => {
    this.CONSUME(t.AuthUser);
    this.CONSUME(t.Dot);
    this.CONSUME(t.Name, { LABEL: 'attribute', ERR_MSG: AUTH_ATTRIBUTE_DESCRIPTION });
    this.OPTION(() => {
      this.CONSUME2(t.Dot);
      this.CONSUME2(t.Name, { LABEL: 'claim', ERR_MSG: CLAIM_NAME_DESCRIPTION });
    });
  });

  readonly literal = this.RULE('literal', () => {
    this.OR({
      DEF: [
        { ALT: () => this.CONSUME(t.IntegerLiteral) },
        { ALT: () => this.CONSUME(t.DecimalLiteral) },
        { ALT: () => this.CONSUME(t.StringLiteral) },
        { ALT: () => this.CONSUME(t.True) },
        { ALT: () => this.CONSUME(t.False) },
        { ALT: () => this.CONSUME(t.Null) },
      ],
      ERR_MSG: LITERAL_DESCRIPTION,
    });
  });
}

/** The one parser instance; chevrotain parsers are reusable by resetting `input`. */
export const policyParser = new PolicyParser({ validate: false });
