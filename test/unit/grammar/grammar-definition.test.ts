// Every process builds the lexer and the parser without chevrotain's definition checks (grammar/
// tokens.ts, grammar/parser.ts); this is where they run, so a grammar change that breaks them
// fails here instead of misparsing in production.

import { Lexer } from 'chevrotain';
import { describe, expect, it } from 'vitest';
import { PolicyParser, policyParser } from '../../../grammar/parser.js';
import { allTokens, createPolicyLexer, policyLexer } from '../../../grammar/tokens.js';

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

  // Each token says whether it can span lines, so that the lexer need not work it out from the
  // patterns at every start; a wrong answer would misplace every line and column after it.
  it('a token may span lines exactly when its pattern can match a line break', () => {
    const lexed = allTokens.filter((t) => t.PATTERN instanceof RegExp && t.PATTERN !== Lexer.NA);
    const spanning = lexed
      .filter((t) =>
        ['\n', '"a\nb"', "'a\nb'"].some((s) => (t.PATTERN as RegExp).exec(s)?.[0].includes('\n')),
      )
      .map((t) => t.name);
    expect(spanning).toEqual(['WhiteSpace', 'QuotedIdentifier', 'StringLiteral']);
    for (const t of lexed) expect(t.LINE_BREAKS, t.name).toBe(spanning.includes(t.name));
  });

  it('places tokens after a line break inside a string, a quoted name and white space', () => {
    const { tokens } = policyLexer.tokenize('title = \'a\nb\' and\n"x\ny" = 1');
    expect(tokens.map((t) => [t.image, t.startLine, t.startColumn])).toEqual([
      ['title', 1, 1],
      ['=', 1, 7],
      ["'a\nb'", 1, 9],
      ['and', 2, 4],
      ['"x\ny"', 3, 1],
      ['=', 4, 4],
      ['1', 4, 6],
    ]);
  });
});
