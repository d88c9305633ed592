// Changing and removing one stored policy (`auth policy edit|remove`, docs/operations.md): an edit is the
// stored row with some fields replaced, validated exactly like `auth policy add` (docs/policy-language.md, cycles
// with the other rows included) before anything is written; an unknown id changes nothing.

import type { PolicyRow } from '../../compiler/types.js';
import { boundSql } from '../../compiler/sql/fragment.js';
import { quoteValue } from '../../errors/quote-value.js';
import { RestError } from '../../errors/rest-error.js';
import type { DbAdapter, SchemaSnapshot } from '../db/adapter.js';
import { policiesIn, validatePolicy, type PolicyField } from './policy-service.js';

/** The fields an edit replaces; absent ones keep their stored value (`columns: null`: every column). */
export type PolicyChanges = { readonly [F in PolicyField]?: string } & { readonly columns?: string | null };

const POSITIVE_INTEGER = /^[1-9][0-9]{0,15}$/;

/** A policy id as typed on the command line: a positive integer (else 400 `invalid_policy_id`). */
export function parsePolicyId(text: string): number {
  const id = POSITIVE_INTEGER.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(id)) {
    throw new RestError('invalid_policy_id', `policy id ${quoteValue(text)} is not a positive integer`);
  }
  return id;
}

const unknownPolicy = (id: number): RestError =>
  new RestError('unknown_policy', `policy ${quoteValue(String(id))} does not exist`, {
    details: { id },
  });

/** The stored row `id` among `rows`, or 404 `unknown_policy`. */
function storedRow(rows: readonly PolicyRow[], id: number): PolicyRow {
  const row = rows.find((r) => r.id === id);
  if (row === undefined) throw unknownPolicy(id);
  return row;
}

/** Deletes policy `id`; returns the row as it was. */
export function removePolicy(adapter: DbAdapter, id: number): Promise<PolicyRow> {
  const sql = boundSql(adapter.dialect);
  return adapter.transaction(async (tx) => {
    const row = storedRow(await policiesIn(tx), id);
    await tx.query(sql`DELETE FROM auth_policies WHERE id = ${id}`);
    return row;
  });
}

/**
 * Replaces the given fields of policy `id` and validates the row that would be stored against
 * `schema` and every other row (read in the same transaction); returns it as stored. Nothing is
 * written when it is invalid. `schema` is read by the caller before: on SQLite the transaction
 * holds the only connection.
 */
export function editPolicy(
  adapter: DbAdapter,
  schema: SchemaSnapshot,
  id: number,
  changes: PolicyChanges,
): Promise<PolicyRow> {
  const sql = boundSql(adapter.dialect);
  return adapter.transaction(async (tx) => {
    const rows = await policiesIn(tx);
    const stored = storedRow(rows, id);
    const policy = validatePolicy(
      { ...stored, ...changes },
      schema,
      rows.filter((r) => r.id !== id),
    );
    await tx.query(
      sql`UPDATE auth_policies SET table_name = ${policy.table_name}, action = ${policy.action}, expression = ${policy.expression}, description = ${policy.description}, columns = ${policy.columns} WHERE id = ${id}`,
    );
    const { table_name, action, expression, description, columns } = policy;
    return Object.freeze({ id, table_name, action, expression, description, columns });
  });
}
