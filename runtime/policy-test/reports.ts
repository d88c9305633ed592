// The machine-readable reports of `rest policy test`: JSON (one entry per case, with each path's
// detail) and JUnit XML (one testsuite per file, one testcase per case) for CI.

import type { CaseResult, FileResult } from './run-file.js';

export interface JsonReport {
  readonly passed: number;
  readonly failed: number;
  readonly files: readonly FileResult[];
}

export function jsonReport(files: readonly FileResult[]): JsonReport {
  return {
    passed: files.reduce((n, f) => n + f.passed, 0),
    failed: files.reduce((n, f) => n + f.failed, 0),
    files,
  };
}

const XML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

/** Text for an XML attribute or element: escaped, and without the characters XML 1.0 forbids. */
const xml = (text: string): string =>
  text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
    .replace(/[&<>"']/g, (c) => XML_ESCAPES[c] ?? c);

function testcase(file: FileResult, c: CaseResult): string {
  const open = `    <testcase classname="${xml(file.file)}" name="${xml(`${c.name} (line ${c.line})`)}"`;
  if (c.passed) return `${open}/>`;
  const message = c.problems.join('; ');
  const detail = JSON.stringify({ paths: c.paths, explain: c.explain?.decision }, null, 2);
  return `${open}>\n      <failure message="${xml(message)}" type="policy">${xml(detail)}</failure>\n    </testcase>`;
}

export function junitReport(files: readonly FileResult[]): string {
  const total = files.reduce((n, f) => n + f.cases.length, 0);
  const failures = files.reduce((n, f) => n + f.failed, 0);
  const suites = files.map(
    (f) =>
      `  <testsuite name="${xml(f.file)}" tests="${f.cases.length}" failures="${f.failed}" errors="0" skipped="0">\n` +
      `    <properties>\n      <property name="database" value="${f.database}"/>\n      <property name="paths" value="${f.paths.join(',')}"/>\n    </properties>\n` +
      f.cases.map((c) => `${testcase(f, c)}\n`).join('') +
      '  </testsuite>',
  );
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="rest policy test" tests="${total}" failures="${failures}">\n${suites.join('\n')}\n</testsuites>\n`;
}
