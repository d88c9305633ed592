// Go-style single-dash flags (`-db.url x`, `-db.url=x`, `-addr :0`) → the `--` spelling yargs
// parses; a one-letter flag (`-h`) and everything after `--` are left alone.
//
// As Go's flag package does, a flag that takes a value takes the next argument as that value
// whatever it begins with: `-auth.secret -x…` is the secret `-x…`, written `--auth.secret=-x…`
// for yargs, which would otherwise read `-x…` as flags of its own (and, refusing them as unknown,
// print part of the secret in its message).

const GO_FLAG = /^-{1,2}([A-Za-z][A-Za-z0-9_.-]+)(=.*)?$/s;

/** `argv` for yargs; `valueFlags` are the names (without dashes) of the flags that take a value. */
export function normalizeArgv(
  argv: readonly string[],
  valueFlags: ReadonlySet<string> = new Set(),
): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const m = GO_FLAG.exec(arg);
    if (m === null) {
      out.push(arg);
      continue;
    }
    const name = m[1] ?? '';
    const value = argv[i + 1];
    if (m[2] === undefined && valueFlags.has(name) && value !== undefined) {
      out.push(`--${name}=${value}`);
      i++;
    } else {
      out.push(`--${name}${m[2] ?? ''}`);
    }
  }
  return out;
}
