// Keeps yargs from rendering a command's whole help each time it runs the command. yargs (18.2.0,
// build/lib/command.js) renders and caches it right after calling a handler, for a later failure
// to show; cli/main.ts's .fail never shows help, so the text is never read. Rendering it (wrapped
// to the terminal's width, string-width on every cell) was most of a command's CPU in-process
// (15 of 20 ms for `auth user list`) and some 40 ms of a `rest auth …` process's start.

import type { Argv } from 'yargs';

/** The part of yargs' internal methods used here (not in its published types). */
interface YargsInternals {
  getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } };
}

/**
 * Makes the help cache of `cli` a no-op; true when it could. A yargs without these internals is
 * left as it is (slower, same output): test/unit/cli/skip-help-cache.test.ts says so on upgrade.
 */
export function skipHelpCache(cli: Argv): boolean {
  const usage = (cli as unknown as YargsInternals).getInternalMethods?.().getUsageInstance?.();
  if (typeof usage?.cacheHelpMessage !== 'function') return false;
  usage.cacheHelpMessage = () => {};
  return true;
}
