// A problem under its input: the offending line, a caret under the column, the message — as the
// CLI prints it (grammar/policy-syntax-error.ts formatPolicyError).

import type { Problem } from './validate.js';

export function ProblemView(props: { readonly id: string; readonly problem: Problem | undefined }) {
  const { problem } = props;
  if (problem === undefined) return null;
  const caret =
    problem.line === undefined || problem.column === undefined
      ? undefined
      : `${problem.line.slice(0, problem.column - 1).replace(/[^\t]/g, ' ')}^`;
  return (
    <div class="problem" id={props.id} role="alert">
      {caret === undefined ? null : (
        <pre class="caret" data-testid="caret">
          {problem.line}
          {'\n'}
          {caret}
        </pre>
      )}
      <p class="message">{problem.message}</p>
    </div>
  );
}
