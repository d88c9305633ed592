// The console's first screen (docs/console.md "First screen"): a SQLite database with 50 tables
// and 200 policies, the real `rest` process, Debian's Chromium through playwright-core, and per
// load two times measured inside the page with performance.now():
//   - load: from the navigation's start to the login form ready (the page's script has run and
//     focused the username field, then a frame painted and a task ran);
//   - login: from pressing "Log in" to the matrix interactive (its row for the last table painted,
//     then a task ran: a key or click would be handled) — the login request, the admin check, the
//     matrix request and its rendering.
// The figure is their sum (the time a person spends typing is not the page's). Each load is a
// fresh browser context: nothing cached in the browser; one untimed load warms the server first. The browser test runs it once and prints it; `npm run
// bench` runs it RUNS times and checks the median against the target. Neither asserts a time.

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { chromium, type Browser } from 'playwright-core';
import type { Measured, TargetCheck } from './report-model.js';
import { freePort, startServer } from './server-process.js';

export const CONSOLE_TABLES = 50;
export const CONSOLE_POLICIES = 200;
/** The target: the first screen interactive within this many milliseconds (median of the loads). */
export const CONSOLE_FIRST_SCREEN_LIMIT_MS = 1000;
const SECRET = 'the console first-screen bench secret, over thirty-two bytes';
const ACTIONS = ['read', 'create', 'update', 'delete'] as const;
const EXPRESSIONS = [
  'user_id = auth_user.id',
  "user_id = auth_user.id or status = 'public'",
  'auth_user.is_admin',
  'user_id = auth_user.id and n > 0',
] as const;

export interface FirstScreenLoad {
  /** Navigation start → the login form ready. */
  readonly loadMs: number;
  /** "Log in" pressed → the matrix interactive. */
  readonly loginMs: number;
  readonly totalMs: number;
}

export interface FirstScreenReport {
  readonly tables: number;
  readonly policies: number;
  readonly loads: readonly FirstScreenLoad[];
  /** Medians over the loads. */
  readonly median: FirstScreenLoad;
}

const tableName = (i: number): string => `t${String(i + 1).padStart(2, '0')}`;

/** The database: CONSOLE_TABLES tables, `rest auth setup`, then policies up to CONSOLE_POLICIES rows. */
async function prepareDatabase(restCli: string, file: string): Promise<string> {
  const db = new Database(file);
  try {
    for (let i = 0; i < CONSOLE_TABLES; i++) {
      db.exec(
        `CREATE TABLE ${tableName(i)} (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, status TEXT, n INTEGER, body TEXT)`,
      );
    }
  } finally {
    db.close();
  }
  const env = { ...process.env, REST_DB_URL: `sqlite://${file}`, REST_AUTH_SECRET: SECRET };
  const { stdout } = await promisify(execFile)(process.execPath, [restCli, 'auth', 'setup'], { env });
  const password = /password: (\S+)/.exec(stdout)?.[1];
  if (password === undefined) throw new Error(`auth setup printed no password: ${stdout.slice(0, 200)}`);
  const rows = new Database(file);
  try {
    const stored = (rows.prepare('SELECT count(*) AS n FROM auth_policies').get() as { n: number }).n;
    const insert = rows.prepare(
      'INSERT INTO auth_policies (description, table_name, action, expression) VALUES (?, ?, ?, ?)',
    );
    rows.transaction(() => {
      for (let i = 0; i < CONSOLE_POLICIES - stored; i++) {
        const table = tableName(i % CONSOLE_TABLES);
        const action = ACTIONS[Math.floor(i / CONSOLE_TABLES) % ACTIONS.length] ?? 'read';
        const expression = EXPRESSIONS[i % EXPRESSIONS.length] ?? '';
        insert.run(`bench ${table} ${action}`, table, action, expression);
      }
    })();
  } finally {
    rows.close();
  }
  return password;
}

// Run in the page (its DOM is not this program's): resolves once `ready()` holds — checked on every
// change of the DOM and of the focus — a frame has been painted and a task has run after it, with
// performance.now() then; rejects after 30 s.
const WHEN_READY = `(ready) => new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error('the console was not ready within 30 s')), 30000);
  const done = () => requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0));
  if (ready()) { clearTimeout(timer); return done(); }
  const check = () => {
    if (!ready()) return;
    observer.disconnect();
    document.removeEventListener('focusin', check);
    clearTimeout(timer);
    done();
  };
  const observer = new MutationObserver(check);
  observer.observe(document, { subtree: true, childList: true, attributes: true });
  document.addEventListener('focusin', check);
})`;

const LOAD = `(${WHEN_READY})(() => document.activeElement?.id === 'login-username')`;

const LOGIN = (lastTable: string): string => `(async () => {
  const start = performance.now();
  const ready = (${WHEN_READY})(() =>
    [...document.querySelectorAll('[data-testid="matrix"] tbody th')].some((th) => th.textContent === ${JSON.stringify(lastTable)}));
  document.querySelector('main.login button[type="submit"]').click();
  return (await ready) - start;
})()`;

async function measureLoad(
  browser: Browser,
  url: string,
  admin: { readonly username: string; readonly password: string },
): Promise<FirstScreenLoad> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await page.goto(`${url}/_/`, { waitUntil: 'commit' });
    const loadMs = await page.evaluate<number>(LOAD);
    await page.getByLabel('Username').fill(admin.username);
    await page.getByLabel('Password').fill(admin.password);
    const loginMs = await page.evaluate<number>(LOGIN(tableName(CONSOLE_TABLES - 1)));
    return { loadMs, loginMs, totalMs: loadMs + loginMs };
  } finally {
    await context.close();
  }
}

const medianOf = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

export interface FirstScreenOptions {
  /** dist/cli/main.js, built. */
  readonly restCli: string;
  readonly runs: number;
  /** A launched Chromium (the browser test's); absent: Debian's, launched and closed here. */
  readonly browser?: Browser;
  /** Absent: REST_TEST_CHROMIUM or /usr/bin/chromium. */
  readonly chromiumPath?: string;
}

/** Sets up the database and the server, loads the console `runs` times, tears everything down. */
export async function measureConsoleFirstScreen(options: FirstScreenOptions): Promise<FirstScreenReport> {
  const dir = mkdtempSync(join(tmpdir(), 'rest-console-bench-'));
  const file = join(dir, 'console.db');
  let browser: Browser | undefined;
  try {
    const password = await prepareDatabase(options.restCli, file);
    const port = await freePort();
    const server = await startServer(
      {
        label: 'rest (console)',
        args: [options.restCli, '-addr', `127.0.0.1:${port}`],
        env: { REST_DB_URL: `sqlite://${file}`, REST_AUTH_SECRET: SECRET, REST_LOG_LEVEL: 'warn' },
        port,
      },
      30_000,
    );
    try {
      browser =
        options.browser ??
        (await chromium.launch({
          executablePath: options.chromiumPath ?? process.env['REST_TEST_CHROMIUM'] ?? '/usr/bin/chromium',
          headless: true,
          args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
        }));
      // One untimed load first: the server's first answers (its files read, its caches filled) are
      // a start-up cost, not the first screen's.
      await measureLoad(browser, server.baseUrl, { username: 'admin', password });
      const loads: FirstScreenLoad[] = [];
      for (let i = 0; i < options.runs; i++) {
        loads.push(await measureLoad(browser, server.baseUrl, { username: 'admin', password }));
      }
      return {
        tables: CONSOLE_TABLES,
        policies: CONSOLE_POLICIES,
        loads,
        median: {
          loadMs: medianOf(loads.map((l) => l.loadMs)),
          loginMs: medianOf(loads.map((l) => l.loginMs)),
          totalMs: medianOf(loads.map((l) => l.totalMs)),
        },
      };
    } finally {
      if (options.browser === undefined) await browser?.close();
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ms = (n: number): string => `${Math.round(n)} ms`;

/** One line for the log and the browser test: the median and its parts. */
export function firstScreenText(r: FirstScreenReport): string {
  const { loadMs, loginMs, totalMs } = r.median;
  const all = r.loads.map((l) => Math.round(l.totalMs)).join(', ');
  return `console first screen ${ms(totalMs)} (page ${ms(loadMs)} + login to matrix ${ms(loginMs)}), median of ${r.loads.length} loads [${all}] on ${r.tables} tables / ${r.policies} policies, SQLite`;
}

/** The target row of BENCHMARKS.md: met when the median is within the limit. */
export function consoleFirstScreenTarget(lane: Measured<FirstScreenReport> | undefined): TargetCheck {
  const target = `console first screen interactive within 1 s on ${CONSOLE_TABLES} tables / ${CONSOLE_POLICIES} policies (median of fresh loads, docs/console.md)`;
  if (lane === undefined) return { target, measured: 'not measured', met: false };
  if (!lane.ok) return { target, measured: `not measured: ${lane.reason}`, met: false };
  const { loadMs, loginMs, totalMs } = lane.value.median;
  return {
    target,
    measured: `${ms(totalMs)} (page ${ms(loadMs)} + login to matrix ${ms(loginMs)}), median of ${lane.value.loads.length}`,
    met: totalMs <= CONSOLE_FIRST_SCREEN_LIMIT_MS,
  };
}
