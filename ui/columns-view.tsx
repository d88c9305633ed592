// What a caller may read and write of a table's columns (the `columns` of `policy explain`,
// runtime/explain/explain-columns.ts): a table of column × read/create/update for Explain, and a
// one-line summary per matrix cell.

import type { ColumnCondition, ColumnsExplanation, ReadColumns, WriteColumns } from './api.js';
import { HeaderRow } from './header-row.js';

const COLUMN_ACTIONS = ['read', 'create', 'update'] as const;
type ColumnAction = (typeof COLUMN_ACTIONS)[number];

const rows = (ids: readonly number[]): string => ids.map((id) => `#${id}`).join(' ');

/** One column's access for one action: its state and, when conditional, the deciding condition. */
interface Access {
  readonly state: 'denied' | 'readable' | 'masked' | 'hidden' | 'writable' | 'conditional' | 'protected';
  readonly condition?: ColumnCondition;
}

function readAccess(read: ReadColumns, column: string): Access {
  if (read.denied) return { state: 'denied' };
  const masked = read.masked.find((m) => m.column === column);
  if (masked !== undefined) return { state: 'masked', condition: masked };
  return { state: read.hidden.includes(column) ? 'hidden' : 'readable' };
}

function writeAccess(write: WriteColumns, column: string): Access {
  if (write.denied) return { state: 'denied' };
  const conditional = write.conditional.find((c) => c.column === column);
  if (conditional !== undefined) return { state: 'conditional', condition: conditional };
  return { state: write.protected.includes(column) ? 'protected' : 'writable' };
}

const accessOf = (columns: ColumnsExplanation, action: ColumnAction, column: string): Access =>
  action === 'read' ? readAccess(columns.read, column) : writeAccess(columns[action], column);

/** Every column the explanation names, in the order it names them. */
function columnNames(columns: ColumnsExplanation): readonly string[] {
  const { read, create, update } = columns;
  const names = [
    ...read.readable,
    ...read.masked.map((m) => m.column),
    ...read.hidden,
    ...[create, update].flatMap((w) => [
      ...w.writable,
      ...w.conditional.map((c) => c.column),
      ...w.protected,
    ]),
  ];
  return [...new Set(names)];
}

function AccessCell(props: { readonly access: Access }) {
  const { state, condition } = props.access;
  return (
    <td class={`column-access ${state}`}>
      {state}
      {condition === undefined ? null : (
        <>
          {' '}
          when <code>{condition.when}</code> ({rows(condition.policy_ids)})
        </>
      )}
    </td>
  );
}

/** Explain's column part as a table: one row per column, one column per action. */
export function ColumnsTable(props: { readonly columns: ColumnsExplanation }) {
  return (
    <table class="columns" data-testid="columns">
      <HeaderRow first="column" names={COLUMN_ACTIONS} />
      <tbody>
        {columnNames(props.columns).map((name) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            {COLUMN_ACTIONS.map((a) => (
              <AccessCell key={a} access={accessOf(props.columns, a, name)} />
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const listed = (label: string, names: readonly string[]): string | undefined =>
  names.length === 0 ? undefined : `${label} ${names.join(', ')}`;

/** A matrix cell's columns in one line (read, create and update only), or undefined. */
export function columnsSummary(columns: ColumnsExplanation, action: string): string | undefined {
  if (action === 'read') {
    const r = columns.read;
    if (r.denied) return undefined;
    return [
      `readable ${r.readable.length === 0 ? 'none' : r.readable.join(', ')}`,
      listed(
        'masked',
        r.masked.map((m) => m.column),
      ),
      listed('hidden', r.hidden),
    ]
      .filter((part) => part !== undefined)
      .join('; ');
  }
  if (action !== 'create' && action !== 'update') return undefined;
  const w = columns[action];
  if (w.denied) return undefined;
  return [
    `writable ${w.writable.length === 0 ? 'none' : w.writable.join(', ')}`,
    listed(
      'conditional',
      w.conditional.map((c) => c.column),
    ),
    listed('protected', w.protected),
  ]
    .filter((part) => part !== undefined)
    .join('; ');
}
