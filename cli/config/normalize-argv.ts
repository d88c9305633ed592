// Go-style single-dash flags (`-db.url x`, `-db.url=x`, `-addr :0`) → the `--` spelling yargs
// parses; a one-letter flag (`-h`) and everything after `--` are left alone.

const GO_FLAG = /^-([A-Za-z][A-Za-z0-9_.-]+)(=.*)?$/s;

export function normalizeArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  let rest = false;
  for (const arg of argv) {
    if (rest || arg === '--') {
      rest = true;
      out.push(arg);
      continue;
    }
    const m = GO_FLAG.exec(arg);
    out.push(m === null ? arg : `--${m[1] ?? ''}${m[2] ?? ''}`);
  }
  return out;
}
