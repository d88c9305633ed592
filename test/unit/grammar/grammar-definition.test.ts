// Every process builds the lexer and the parser without chevrotain's definition checks (grammar/
// tokens.ts, grammar/parser.ts); this is where they run, so a grammar change that breaks them
// fails here instead of misparsing in production.

import { describe, expect, it } from 'vitest';
import { PolicyParser, policyParser } from '../../../grammar/parser.js';
import { createPolicyLexer, policyLexer } from '../../../grammar/tokens.js';

describe('grammar definition', () => {
  it('the lexer passes chevrotain token validations', () => {
    expect(createPolicyLexer({ validate: true }).lexerDefinitionErrors).toEqual([]);
  });

  it('the parser passes chevrotain grammar validations (performSelfAnalysis throws listing them otherwise)', () => {
    expect(() => new PolicyParser({ validate: true })).not.toThrow();
  });

  it('a validated parser and lexer read a policy as the unvalidated ones do', () => {
    const text =
      "team_id in (select team_id from members where user_id = auth_user.id) or not (a.b is null and c <> 'x')";
    const validated = new PolicyParser({ validate: true });
    validated.input = createPolicyLexer({ validate: true }).tokenize(text).tokens;
    const expected = validated.expression();
    policyParser.input = policyLexer.tokenize(text).tokens;
    expect(policyParser.expression()).toEqual(expected);
    expect(validated.errors).toEqual([]);
  });
});
