// `policy explain` for a caller, a table, an action and optionally a row's key: the decision, the
// chosen rows, the compiled WHERE predicate, the RLS DDL on PostgreSQL, and the row's verdict.

import { useEffect, useState } from 'preact/hooks';
import { ACTIONS, type Action, type Caller, type ColumnsExplanation, type ExplainBody } from './api.js';
import { CallerPicker } from './caller-picker.js';
import { Choice } from './choice.js';
import { ColumnsTable } from './columns-view.js';
import { ErrorAlert } from './error-alert.js';
import { useAnswer } from './use-answer.js';

interface Candidate {
  readonly id: number;
  readonly table_name: string;
  readonly action: string;
  readonly expression: string;
  readonly chosen: boolean;
  readonly reason: string;
  readonly error: string | null;
}

interface RowCondition {
  readonly policy_id?: number;
  readonly expression: string;
  readonly value: boolean | null;
  readonly decides: boolean;
  readonly parts: readonly RowCondition[];
}

interface Explanation {
  readonly decision: {
    readonly kind: string;
    readonly status?: number;
    readonly reason: string;
    readonly sql?: string;
  };
  readonly expression: string;
  readonly candidates: readonly Candidate[];
  readonly predicate: { readonly sql: string; readonly values: readonly unknown[] };
  readonly rls_ddl: readonly string[] | null;
  readonly row: { readonly verdict: string; readonly conditions: readonly RowCondition[] } | null;
  readonly warnings: readonly string[];
  readonly escalations: readonly { readonly message: string }[];
  readonly columns?: ColumnsExplanation;
}

export interface ExplainRequest {
  readonly table: string;
  readonly action: Action;
  readonly caller: Caller;
}

const truth = (v: boolean | null): string => (v === null ? 'NULL' : v ? 'TRUE' : 'FALSE');

function Conditions(props: { readonly items: readonly RowCondition[] }) {
  return (
    <ul>
      {props.items.map((c, i) => (
        <li key={i}>
          <code>{c.expression}</code> → <strong>{truth(c.value)}</strong>
          {c.decides ? ' (decides)' : ''}
          {c.parts.length === 0 ? null : <Conditions items={c.parts} />}
        </li>
      ))}
    </ul>
  );
}

export function ExplainView(props: {
  readonly tables: readonly string[];
  readonly request: ExplainRequest | undefined;
}) {
  const [caller, setCaller] = useState<Caller | string>(props.request?.caller ?? { kind: 'anonymous' });
  const [table, setTable] = useState(props.request?.table ?? props.tables[0] ?? '');
  const [action, setAction] = useState<Action>(props.request?.action ?? 'read');
  const [row, setRow] = useState('');
  const { answer: result, error, post, fail } = useAnswer<Explanation>();
  const explain = async (who: Caller | string, t: string, a: Action, key: string): Promise<void> => {
    if (typeof who === 'string') {
      fail(who);
      return;
    }
    const body: ExplainBody = {
      caller: who,
      table: t,
      action: a,
      ...(key.trim() === '' ? {} : { row: key.trim() }),
    };
    await post('/_/api/explain', body);
  };
  useEffect(() => {
    if (props.request !== undefined)
      void explain(props.request.caller, props.request.table, props.request.action, '');
  }, [props.request]);
  return (
    <section aria-labelledby="explain-title">
      <h2 id="explain-title">Explain</h2>
      {props.request === undefined ? null : (
        <p class="note">
          Explaining {props.request.table} {props.request.action} for the caller chosen in the matrix.
        </p>
      )}
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          void explain(caller, table, action, row);
        }}
      >
        {props.request === undefined ? <CallerPicker id="explain-caller" onChange={setCaller} /> : null}
        <Choice id="explain-table" label="Table" value={table} options={props.tables} onChange={setTable} />
        <Choice id="explain-action" label="Action" value={action} options={ACTIONS} onChange={setAction} />
        <label for="explain-row">Row key (optional)</label>
        <input id="explain-row" value={row} onInput={(e) => setRow(e.currentTarget.value)} />
        <button type="submit">Explain</button>
      </form>
      <ErrorAlert error={error} />
      {result === undefined ? null : (
        <div class="explanation" data-testid="explanation">
          <h3>Decision</h3>
          <p>
            <strong class={`decision ${result.decision.kind}`}>
              {result.decision.kind}
              {result.decision.status === undefined ? '' : ` ${result.decision.status}`}
            </strong>
            : {result.decision.reason}
          </p>
          <h3>Expression</h3>
          <pre>{result.expression}</pre>
          <h3>Compiled WHERE predicate</h3>
          <pre data-testid="predicate">{result.predicate.sql}</pre>
          {result.predicate.values.length === 0 ? null : (
            <p>Values: {JSON.stringify(result.predicate.values)}</p>
          )}
          {result.row === null ? null : (
            <>
              <h3>The row</h3>
              <p data-testid="row-verdict">{result.row.verdict}</p>
              <Conditions items={result.row.conditions} />
            </>
          )}
          <h3>Candidate rows</h3>
          <ul>
            {result.candidates.map((c) => (
              <li key={c.id}>
                #{c.id} {c.table_name} {c.action}{' '}
                <code>{c.expression === '' ? '(allow)' : c.expression}</code>:{' '}
                {c.chosen ? 'chosen' : 'not chosen'} — {c.reason}
                {c.error === null ? '' : ` (broken: ${c.error})`}
              </li>
            ))}
          </ul>
          {result.columns === undefined ? null : (
            <>
              <h3>Columns</h3>
              <ColumnsTable columns={result.columns} />
            </>
          )}
          {result.rls_ddl === null ? null : (
            <>
              <h3>Row-level security DDL</h3>
              <pre data-testid="rls-ddl">{result.rls_ddl.join('\n')}</pre>
            </>
          )}
          {[...result.warnings, ...result.escalations.map((e) => e.message)].length === 0 ? null : (
            <>
              <h3>Warnings</h3>
              <ul class="warnings">
                {[...result.warnings, ...result.escalations.map((e) => e.message)].map((w) => (
                  <li key={w}>{w}</li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
    </section>
  );
}
