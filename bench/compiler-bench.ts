// Micro-benchmark of the policy compiler (`npm run bench:compiler` after `npm run build`): µs per
// parse + compile of each expression, and per request the in-process work — decide, render the
// predicate, check a row — on a compiled PolicySet.

import { analyze } from '../compiler/analyze.js';
import { compileCondition } from '../compiler/evaluate.js';
import { compilePolicySet, type CompiledPolicy } from '../compiler/policy-set.js';
import { compileRls } from '../compiler/rls/compile-rls.js';
import { compileToSql } from '../compiler/sql/compile-predicate.js';
import { dialects } from '../compiler/sql/dialects.js';
import { renderSql } from '../compiler/sql/fragment.js';
import {
  ANONYMOUS,
  type AuthUser,
  type ColumnType,
  type DialectName,
  type PolicyRow,
} from '../compiler/types.js';
import { parsePolicy } from '../grammar/parse-policy.js';

const COLUMNS: ReadonlyMap<string, ColumnType> = new Map([
  ['id', 'integer'],
  ['user_id', 'integer'],
  ['org', 'text'],
  ['score', 'decimal'],
  ['flag', 'boolean'],
  ['name', 'text'],
]);

const EXPRESSIONS: readonly string[] = [
  '',
  'auth_user.is_authenticated',
  'auth_user.is_admin',
  'user_id = auth_user.id',
  'auth_user.is_admin or user_id = auth_user.id',
  "org = auth_user.claims.org and (flag or score >= 10.5) and name not in ('a', 'b')",
  "not (user_id is null) and (auth_user.claims.level in (1, 2, 3) or name < 'm') and org != ''",
];

const USERS: Readonly<Record<string, AuthUser>> = {
  anonymous: ANONYMOUS,
  user: {
    id: 42,
    username: 'alice',
    is_admin: false,
    is_authenticated: true,
    claims: { org: 'acme', level: 2 },
  },
  admin: { id: 1, username: 'root', is_admin: true, is_authenticated: true, claims: {} },
};
const ROW = { id: 1, user_id: 42, org: 'acme', score: '12.50', flag: true, name: 'bob' };

/** Median over 9 samples of ~25 ms each, after a warm-up: µs per call (robust to a busy machine). */
function measure(fn: () => unknown): number {
  for (let i = 0; i < 2_000; i++) fn();
  const samples: number[] = [];
  for (let s = 0; s < 9; s++) {
    let calls = 0;
    const start = performance.now();
    let now = start;
    while (now - start < 25) {
      for (let i = 0; i < 100; i++) fn();
      calls += 100;
      now = performance.now();
    }
    samples.push(((now - start) * 1000) / calls);
  }
  return samples.sort((a, b) => a - b)[4] as number;
}

const fmt = (us: number): string => us.toFixed(us < 1 ? 3 : 2).padStart(9);
const label = (text: string): string =>
  JSON.stringify(text.length > 58 ? `${text.slice(0, 55)}...` : text).padEnd(62);

function compileAll(text: string, dialect: DialectName): unknown {
  const expr = parsePolicy(text);
  analyze(expr, COLUMNS);
  compileCondition(expr, COLUMNS);
  return compileToSql(expr, dialects[dialect], { columns: COLUMNS });
}

function main(): void {
  const dialect: DialectName = 'postgres';
  console.log(`policy compiler micro-benchmark (node ${process.version}; µs per call)\n`);
  console.log(`${'expression'.padEnd(62)}    parse  +analyze+compile      RLS DDL`);
  for (const text of EXPRESSIONS) {
    const parse = measure(() => parsePolicy(text));
    const compile = measure(() => compileAll(text, dialect));
    const rows: PolicyRow[] = [
      { id: 1, table_name: 't', action: 'all', expression: text, description: '', columns: null },
    ];
    const rls = measure(() => compileRls({ table: 't', columns: COLUMNS, policies: rows, roles: ['rest'] }));
    console.log(`${label(text)} ${fmt(parse)} ${fmt(compile)}         ${fmt(rls)}`);
  }

  console.log(
    `\nper request on a compiled PolicySet (${dialect}): decide, render the predicate, check one row`,
  );
  console.log(`${'expression'.padEnd(62)} ${'user'.padEnd(10)}   decide   render    check  decision`);
  for (const text of EXPRESSIONS) {
    const set = compilePolicySet(
      [{ id: 1, table_name: 't', action: 'all', expression: text, description: '', columns: null }],
      dialects[dialect],
    );
    const policy: CompiledPolicy = set.policyFor('t', 'read', COLUMNS);
    for (const [who, user] of Object.entries(USERS)) {
      const decision = policy.decide(user);
      const decide = measure(() => set.policyFor('t', 'read', COLUMNS).decide(user));
      const render =
        decision.kind === 'filter'
          ? measure(() => renderSql(dialects[dialect], decision.predicate, user))
          : 0;
      const check = measure(() => policy.check(ROW, user));
      console.log(
        `${label(text)} ${who.padEnd(10)} ${fmt(decide)} ${fmt(render)} ${fmt(check)}  ${decision.kind}`,
      );
    }
  }
}

main();
