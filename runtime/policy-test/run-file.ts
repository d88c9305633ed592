// `rest policy test` as a library (the CLI and the console call it): a test file's text → one
// result per case and matrix cell, each with what every path did. On PostgreSQL the file runs
// once per path (native RLS and the portable WHERE predicates), each run in its own rolled-back
// transaction; a case passes only when it passed on every path and the paths saw the same thing.

import { RestError } from '../../errors/rest-error.js';
import type { Config } from '../config.js';
import type { DbAdapter } from '../db/adapter.js';
import type { PolicyExplanation } from '../explain/explain-policy.js';
import { disagreement, type Observed } from './expectations.js';
import { runPath, type PathName, type PathOutcome, type PathRun } from './run-path.js';
import { parseTestFile } from './test-file.js';

export type { PathName } from './run-path.js';
export type PathChoice = PathName | 'all';

export interface CaseResult {
  readonly name: string;
  readonly kind: 'case' | 'matrix';
  readonly line: number;
  readonly column: number;
  readonly passed: boolean;
  /** Every problem on every path, prefixed by its path when there are several; empty when passed. */
  readonly problems: readonly string[];
  readonly paths: Readonly<Partial<Record<PathName, PathOutcome>>>;
  /** The `policy explain` of the first path it failed on. */
  readonly explain?: PolicyExplanation;
}

export interface FileResult {
  readonly file: string;
  readonly database: DbAdapter['kind'];
  readonly paths: readonly PathName[];
  readonly passed: number;
  readonly failed: number;
  readonly cases: readonly CaseResult[];
}

export interface PolicyTestOptions {
  /** The database to run on; each run takes one of its connections and rolls it back. */
  readonly adapter: DbAdapter;
  readonly config: Config;
  /** PostgreSQL: `all` (the default), `native` or `portable`; other databases have the portable path only. */
  readonly path?: PathChoice;
}

/** The paths a file runs on: both on PostgreSQL unless one is chosen; portable elsewhere. */
export function pathsFor(kind: DbAdapter['kind'], choice: PathChoice = 'all'): readonly PathName[] {
  if (kind !== 'postgres') {
    if (choice === 'native') {
      throw new RestError('invalid_arguments', `--path native needs PostgreSQL; this database is ${kind}`);
    }
    return ['portable'];
  }
  return choice === 'all' ? ['native', 'portable'] : [choice];
}

/** Joins the runs of each path into one result per case. */
export function combineRuns(runs: readonly PathRun[]): CaseResult[] {
  const first = runs[0];
  if (first === undefined) return [];
  const several = runs.length > 1;
  return first.items.map((item, i): CaseResult => {
    const paths: Partial<Record<PathName, PathOutcome>> = {};
    const observed = new Map<string, Observed>();
    const problems: string[] = [];
    let explain: PolicyExplanation | undefined;
    for (const run of runs) {
      const outcome = run.outcomes[i];
      if (outcome === undefined) continue;
      paths[run.path] = outcome;
      observed.set(run.path, outcome.observed);
      for (const p of outcome.problems) problems.push(several ? `${run.path}: ${p}` : p);
      if (!outcome.passed) explain ??= outcome.explain;
    }
    const split = several ? disagreement(observed) : undefined;
    if (split !== undefined) problems.push(split);
    return {
      name: item.name,
      kind: item.kind,
      line: item.line,
      column: item.column,
      passed: problems.length === 0,
      problems,
      paths,
      ...(explain === undefined ? {} : { explain }),
    };
  });
}

/**
 * Runs one policy test file (docs/policy-tests.md). A malformed file, an unknown user or table or
 * an invalid policy throws RestError `invalid_test_file` with its line; a database failure throws
 * as it comes. Nothing the file does stays in the database.
 */
export async function runPolicyTestFile(
  source: string,
  fileName: string,
  options: PolicyTestOptions,
): Promise<FileResult> {
  const file = parseTestFile(source, fileName);
  const paths = pathsFor(options.adapter.kind, options.path);
  const runs: PathRun[] = [];
  for (const path of paths)
    runs.push(await runPath(file, { adapter: options.adapter, config: options.config, path }));
  const cases = combineRuns(runs);
  const failed = cases.filter((c) => !c.passed).length;
  return {
    file: fileName,
    database: options.adapter.kind,
    paths,
    passed: cases.length - failed,
    failed,
    cases,
  };
}
