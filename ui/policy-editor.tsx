// The policy editor: one row of auth_policies as a form. The expression and the column rule are
// validated as typed by the grammar in the page; nothing is saved while either is invalid; the
// server's own validation (tables, columns, types) answers on save, shown the same way. This module
// and the grammar are a chunk of their own, loaded when the editor is first opened.

import { useEffect, useRef, useState } from 'preact/hooks';
import { call, errorOf, type Escalation } from './api.js';
import { Choice } from './choice.js';
import { ProblemView } from './problem-view.js';
import { columnsProblem, expressionProblem, serverProblem, type Problem } from './validate.js';

const POLICY_ACTIONS = ['all', 'read', 'create', 'update', 'delete', 'read_mine'] as const;

export interface Draft {
  readonly id: number | undefined;
  readonly table_name: string;
  readonly action: string;
  readonly expression: string;
  readonly columns: string;
  readonly description: string;
}

export interface EditorProps {
  readonly draft: Draft;
  readonly tables: readonly string[];
  readonly hasColumns: boolean;
  readonly onSaved: (warnings: readonly Escalation[]) => void;
  readonly onCancel: () => void;
}

export function PolicyEditor(props: EditorProps) {
  const [draft, setDraft] = useState(props.draft);
  const [server, setServer] = useState<{ field: 'expression' | 'columns' | 'other'; problem: Problem }>();
  const first = useRef<HTMLSelectElement>(null);
  useEffect(() => first.current?.focus(), []);
  const expression = expressionProblem(draft.expression);
  const columns = props.hasColumns ? columnsProblem(draft.columns) : undefined;
  const set = (change: Partial<Draft>): void => {
    // From the latest draft, not this render's: keys typed quickly never undo one another.
    setDraft((current) => ({ ...current, ...change }));
    setServer(undefined);
  };
  const save = async (): Promise<void> => {
    const body = {
      table_name: draft.table_name,
      action: draft.action,
      expression: draft.expression,
      description: draft.description,
      ...(props.hasColumns ? { columns: draft.columns.trim() === '' ? null : draft.columns } : {}),
    };
    const reply =
      draft.id === undefined
        ? await call('POST', '/auth_policies', body)
        : await call('PATCH', `/auth_policies/${draft.id}`, body);
    if (reply.status === 200 || reply.status === 201) {
      props.onSaved((reply.body as { warnings?: readonly Escalation[] }).warnings ?? []);
      return;
    }
    const error = errorOf(reply);
    const field = error.details?.['field'];
    const where = field === 'columns' ? 'columns' : field === 'expression' ? 'expression' : 'other';
    const text = where === 'columns' ? draft.columns : draft.expression;
    setServer({
      field: where,
      problem: where === 'other' ? { message: error.message } : serverProblem(text, error),
    });
  };
  const shownExpression = expression ?? (server?.field === 'expression' ? server.problem : undefined);
  const shownColumns = columns ?? (server?.field === 'columns' ? server.problem : undefined);
  const invalid = expression !== undefined || columns !== undefined;
  return (
    <form
      class="editor"
      aria-label={draft.id === undefined ? 'New policy' : `Edit policy #${draft.id}`}
      onSubmit={(e) => {
        e.preventDefault();
        if (!invalid) void save();
      }}
    >
      <h3>{draft.id === undefined ? 'New policy' : `Edit policy #${draft.id}`}</h3>
      <Choice
        id="policy-table"
        label="Table"
        selectRef={first}
        value={draft.table_name}
        options={['all', ...props.tables]}
        onChange={(table_name) => set({ table_name })}
      />
      <Choice
        id="policy-action"
        label="Action"
        value={draft.action}
        options={POLICY_ACTIONS}
        onChange={(action) => set({ action })}
      />
      <label for="policy-expression">Expression (empty: allow)</label>
      <textarea
        id="policy-expression"
        rows={3}
        spellcheck={false}
        value={draft.expression}
        aria-invalid={shownExpression !== undefined}
        aria-describedby="policy-expression-problem"
        onInput={(e) => set({ expression: e.currentTarget.value })}
      />
      <ProblemView id="policy-expression-problem" problem={shownExpression} />
      {props.hasColumns ? (
        <>
          <label for="policy-columns">Columns (empty or *: every column; a, b; * except (c))</label>
          <input
            id="policy-columns"
            spellcheck={false}
            value={draft.columns}
            aria-invalid={shownColumns !== undefined}
            aria-describedby="policy-columns-problem"
            onInput={(e) => set({ columns: e.currentTarget.value })}
          />
          <ProblemView id="policy-columns-problem" problem={shownColumns} />
        </>
      ) : null}
      <label for="policy-description">Description</label>
      <input
        id="policy-description"
        value={draft.description}
        onInput={(e) => set({ description: e.currentTarget.value })}
      />
      {server?.field === 'other' ? <ProblemView id="policy-problem" problem={server.problem} /> : null}
      <div class="buttons">
        <button type="submit" disabled={invalid}>
          Save policy
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
