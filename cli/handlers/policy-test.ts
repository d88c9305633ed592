// `rest policy test` (cli/commands/policy-test.ts), run: every file read and run in turn on the
// configured database, the report printed, exit 4 when a case failed.

import { readFile } from 'node:fs/promises';
import { RestError } from '../../errors/rest-error.js';
import { jsonReport, junitReport } from '../../runtime/policy-test/reports.js';
import { runPolicyTestFile, type FileResult, type PathChoice } from '../../runtime/policy-test/run-file.js';
import type { GlobalArgs } from '../config/global-options.js';
import type { CommandContext } from '../context.js';
import { ExitStatus } from '../exit-status.js';
import { formatJson } from '../output/json.js';
import { formatPolicyTests } from '../output/policy-test.js';
import { configOf, withAuthDatabase } from './database.js';

export interface PolicyTestArgs extends GlobalArgs {
  readonly files: readonly string[];
  readonly format: 'text' | 'json' | 'junit';
  readonly path: PathChoice;
}

/** Exit status of a run where a case failed (docs/policy-tests.md). */
export const EXIT_CASE_FAILED = 4;

async function source(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    const why = (e as { code?: unknown }).code === 'ENOENT' ? 'no such file' : String((e as Error).message);
    throw new RestError('invalid_test_file', `${file}: cannot read the test file (${why})`);
  }
}

export async function run(ctx: CommandContext, argv: PolicyTestArgs): Promise<void> {
  const config = configOf(ctx, argv);
  const texts = await Promise.all(argv.files.map(async (f) => [f, await source(f)] as const));
  const results = await withAuthDatabase(config, async (adapter) => {
    const out: FileResult[] = [];
    for (const [file, text] of texts) {
      out.push(await runPolicyTestFile(text, file, { adapter, config, path: argv.path }));
    }
    return out;
  });
  const report =
    argv.format === 'json'
      ? formatJson(jsonReport(results))
      : argv.format === 'junit'
        ? junitReport(results)
        : formatPolicyTests(results);
  ctx.io.stdout(report);
  if (results.some((r) => r.failed > 0)) throw new ExitStatus(EXIT_CASE_FAILED);
}
