// The rows of auth_policies: list, add, edit, remove. The expression and the column rule are
// validated as typed by the grammar in the page; nothing is saved while either is invalid; the
// server's own validation (tables, columns, types) answers on save, shown the same way.

import { useEffect, useRef, useState } from 'preact/hooks';
import { call, errorOf, listPolicies, type Escalation, type PolicyRow } from './api.js';
import type { Draft, PolicyEditor } from './policy-editor.js';

// The editor carries the grammar; it is fetched when first opened, not with the first screen.
let loadingEditor: Promise<typeof PolicyEditor> | undefined;
const loadEditor = (): Promise<typeof PolicyEditor> =>
  (loadingEditor ??= import('./policy-editor.js').then((m) => m.PolicyEditor));

const draftOf = (row: PolicyRow | undefined, table: string): Draft => ({
  id: row?.id,
  table_name: row?.table_name ?? table,
  action: row?.action ?? 'read',
  expression: row?.expression ?? '',
  columns: row?.columns ?? '',
  description: row?.description ?? '',
});

export function PoliciesView(props: { readonly tables: readonly string[]; readonly hasColumns: boolean }) {
  const [rows, setRows] = useState<readonly PolicyRow[]>([]);
  const [editing, setEditing] = useState<Draft | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const [warnings, setWarnings] = useState<readonly Escalation[]>([]);
  const [Editor, setEditor] = useState<typeof PolicyEditor>();
  useEffect(() => {
    if (editing === undefined || Editor !== undefined) return;
    loadEditor().then(
      (editor) => setEditor(() => editor),
      () => {
        loadingEditor = undefined;
        setEditing(undefined);
        setMessage('The policy editor could not be loaded; try again.');
      },
    );
  }, [editing, Editor]);
  // When the editor closes (saved or cancelled) the focus returns to "Add policy", not to the page.
  const add = useRef<HTMLButtonElement>(null);
  const opened = useRef(false);
  useEffect(() => {
    if (editing !== undefined) opened.current = true;
    else if (opened.current) add.current?.focus();
  }, [editing]);
  const refresh = async (): Promise<void> => {
    const reply = await listPolicies();
    if (reply.status === 200) setRows(reply.body);
    else setMessage(errorOf(reply).message);
  };
  useEffect(() => {
    void refresh();
  }, []);
  const remove = async (row: PolicyRow): Promise<void> => {
    if (!window.confirm(`Remove policy #${row.id} (${row.table_name} ${row.action})?`)) return;
    const reply = await call<{ warnings?: readonly Escalation[] }>('DELETE', `/auth_policies/${row.id}`);
    setMessage(reply.status === 200 ? `Removed policy #${row.id}.` : errorOf(reply).message);
    setWarnings(reply.body?.warnings ?? []);
    await refresh();
  };
  return (
    <section aria-labelledby="policies-title">
      <h2 id="policies-title">Policies</h2>
      <p class="note">
        Rows of auth_policies. Expressions are checked as you type by the same grammar as the server's.
      </p>
      {editing === undefined ? (
        <button
          type="button"
          ref={add}
          onClick={() => setEditing(draftOf(undefined, props.tables[0] ?? 'all'))}
        >
          Add policy
        </button>
      ) : Editor === undefined ? (
        <p class="status" role="status">
          Loading the editor…
        </p>
      ) : (
        <Editor
          key={editing.id ?? 'new'}
          draft={editing}
          tables={props.tables}
          hasColumns={props.hasColumns}
          onCancel={() => setEditing(undefined)}
          onSaved={(w) => {
            setMessage(editing.id === undefined ? 'Policy added.' : `Policy #${editing.id} saved.`);
            setWarnings(w);
            setEditing(undefined);
            void refresh();
          }}
        />
      )}
      {message === undefined ? null : (
        <p class="status" role="status">
          {message}
        </p>
      )}
      {warnings.length === 0 ? null : (
        <ul class="warnings">
          {warnings.map((w) => (
            <li key={`${w.policy_id}-${w.relation_policy_id}-${w.table}-${w.action}`}>{w.message}</li>
          ))}
        </ul>
      )}
      <table class="policies" data-testid="policies">
        <thead>
          <tr>
            <th scope="col">id</th>
            <th scope="col">table</th>
            <th scope="col">action</th>
            <th scope="col">expression</th>
            {props.hasColumns ? <th scope="col">columns</th> : null}
            <th scope="col">description</th>
            <th scope="col">
              <span class="visually-hidden">actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id}>
              <td>{r.id}</td>
              <td>{r.table_name}</td>
              <td>{r.action}</td>
              <td>
                <code>{r.expression === '' ? '(allow)' : r.expression}</code>
              </td>
              {props.hasColumns ? (
                <td>
                  <code>{r.columns ?? '*'}</code>
                </td>
              ) : null}
              <td>{r.description}</td>
              <td class="buttons">
                <button
                  type="button"
                  aria-label={`Edit policy #${r.id}`}
                  onClick={() => setEditing(draftOf(r, r.table_name))}
                >
                  Edit
                </button>
                <button type="button" aria-label={`Remove policy #${r.id}`} onClick={() => void remove(r)}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
