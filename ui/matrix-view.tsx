// The table × action matrix for a caller: each cell's decision and the rows that decide it, the
// broken rows and the escalation warnings. A cell is a button that opens its explanation.

import { useEffect, useState } from 'preact/hooks';
import { ACTIONS, call, errorOf, type Action, type Caller, type Matrix, type MatrixCell } from './api.js';
import { CallerPicker } from './caller-picker.js';
import { columnsSummary } from './columns-view.js';
import { ErrorAlert } from './error-alert.js';
import { HeaderRow } from './header-row.js';

const cellText = (cell: MatrixCell): string =>
  cell.decision === 'deny' ? `deny ${cell.status ?? ''}` : cell.decision;

const provenance = (cell: MatrixCell): string =>
  cell.policies.length === 0 ? 'no row' : cell.policies.map((id) => `#${id}`).join(' ');

export interface MatrixViewProps {
  /** The anonymous caller's matrix when already at hand (the login asked for it); else it is fetched. */
  readonly first?: Matrix | undefined;
  readonly onLoaded: (matrix: Matrix) => void;
  readonly onExplain: (table: string, action: Action, caller: Caller) => void;
}

export function MatrixView(props: MatrixViewProps) {
  const [caller, setCaller] = useState<Caller | string>({ kind: 'anonymous' });
  const [shown, setShown] = useState<{ readonly caller: Caller; readonly matrix: Matrix } | undefined>(
    props.first === undefined ? undefined : { caller: { kind: 'anonymous' }, matrix: props.first },
  );
  const [error, setError] = useState<string | undefined>();
  const load = async (who: Caller | string): Promise<void> => {
    if (typeof who === 'string') {
      setError(who);
      return;
    }
    const reply = await call<Matrix>('POST', '/_/api/matrix', { caller: who });
    if (reply.status !== 200) {
      setError(errorOf(reply).message);
      return;
    }
    setError(undefined);
    setShown({ caller: who, matrix: reply.body });
    props.onLoaded(reply.body);
  };
  useEffect(() => {
    if (props.first === undefined) void load({ kind: 'anonymous' });
  }, []);
  return (
    <section aria-labelledby="matrix-title">
      <h2 id="matrix-title">Matrix</h2>
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          void load(caller);
        }}
      >
        <CallerPicker id="matrix-caller" onChange={setCaller} />
        <button type="submit">Show matrix</button>
      </form>
      <ErrorAlert error={error} />
      {shown === undefined ? null : (
        <>
          <p class="note">
            {shown.matrix.database}
            {shown.matrix.native_rls ? ', native row-level security' : ', compiled WHERE predicates'}. Each
            cell: the decision and the policy rows that decide it; choose one to explain it.
          </p>
          <table class="matrix" data-testid="matrix">
            <HeaderRow first="table" names={ACTIONS} />
            <tbody>
              {shown.matrix.tables.map((t) => (
                <tr key={t.table}>
                  <th scope="row">{t.table}</th>
                  {ACTIONS.map((a) => {
                    const cell = t.cells[a];
                    const columns =
                      t.column_access === undefined ? undefined : columnsSummary(t.column_access, a);
                    const label = `${t.table} ${a}: ${cellText(cell)}, ${provenance(cell)}`;
                    return (
                      <td key={a} class={`cell ${cell.decision}`}>
                        <button
                          type="button"
                          aria-label={`${label}${columns === undefined ? '' : `; ${columns}`}; explain`}
                          onClick={() => props.onExplain(t.table, a, shown.caller)}
                        >
                          <span class="decision">{cellText(cell)}</span>
                          <span class="rows">{provenance(cell)}</span>
                          {columns === undefined ? null : <span class="columns">{columns}</span>}
                        </button>
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
          {shown.matrix.broken.length === 0 ? null : (
            <>
              <h3>Broken rows (they allow nothing until fixed)</h3>
              <ul class="warnings">
                {shown.matrix.broken.map((b) => (
                  <li key={b.id}>
                    #{b.id}: {b.error}
                  </li>
                ))}
              </ul>
            </>
          )}
          {shown.matrix.escalations.length === 0 ? null : (
            <>
              <h3>Escalation warnings</h3>
              <ul class="warnings" data-testid="escalations">
                {shown.matrix.escalations.map((w) => (
                  <li key={`${w.policy_id}-${w.relation_policy_id}-${w.table}-${w.action}`}>{w.message}</li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </section>
  );
}
