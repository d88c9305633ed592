// A policy test file (docs/policy-tests.md), pasted or uploaded, run on the server's database in a
// transaction that is rolled back: each case's result.

import { useState } from 'preact/hooks';
import type { TestBody } from './api.js';
import { ErrorAlert } from './error-alert.js';
import { useAnswer } from './use-answer.js';

interface CaseResult {
  readonly name: string;
  readonly line: number;
  readonly passed: boolean;
  readonly problems: readonly string[];
}

interface FileResult {
  readonly passed: number;
  readonly failed: number;
  readonly paths: readonly string[];
  readonly cases: readonly CaseResult[];
}

export function TestsView() {
  const [source, setSource] = useState('');
  const [name, setName] = useState('console.yaml');
  const { answer: result, error, post } = useAnswer<FileResult>();
  const run = (): Promise<void> => {
    const body: TestBody = { source, name };
    return post('/_/api/test', body);
  };
  return (
    <section aria-labelledby="tests-title">
      <h2 id="tests-title">Policy tests</h2>
      <p class="note">Paste or upload a policy test file; it runs in a transaction that is rolled back.</p>
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <label for="tests-file">Upload a file</label>
        <input
          id="tests-file"
          type="file"
          accept=".yaml,.yml,text/yaml"
          onChange={(e) => {
            const file = e.currentTarget.files?.[0];
            if (file === undefined) return;
            setName(file.name);
            void file.text().then(setSource);
          }}
        />
        <label for="tests-source">Test file (YAML)</label>
        <textarea
          id="tests-source"
          rows={12}
          spellcheck={false}
          value={source}
          onInput={(e) => setSource(e.currentTarget.value)}
        />
        <button type="submit">Run tests</button>
      </form>
      <ErrorAlert error={error} />
      {result === undefined ? null : (
        <div data-testid="test-results">
          <p role="status">
            {result.passed} passed, {result.failed} failed ({result.paths.join(' and ')})
          </p>
          <ul>
            {result.cases.map((c) => (
              <li key={`${c.line}-${c.name}`} class={c.passed ? 'pass' : 'fail'}>
                {c.passed ? 'pass' : 'FAIL'} — {c.name} (line {c.line})
                {c.problems.length === 0 ? null : (
                  <ul>
                    {c.problems.map((p) => (
                      <li key={p}>{p}</li>
                    ))}
                  </ul>
                )}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
