// The PostgREST dialect's answers (docs/postgrest.md): a table request's outcome → status,
// `Content-Range` and body as PostgREST's clients read them.

import { RestError } from '../../errors/rest-error.js';
import type { Row } from '../db/adapter.js';
import type { Outcome } from '../handlers/table-handler.js';
import { singularMismatch, type PgrstAnswer } from '../request/parse-pgrst.js';

export interface PgrstReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Undefined: no body at all. */
  readonly body: unknown;
}

const withoutNulls = (row: Row): Row => Object.fromEntries(Object.entries(row).filter(([, v]) => v !== null));

// `first-last/total`, with `*` for an unknown total, and only `*` before the slash when no row came back.
function contentRange(offset: number, rows: number, total: number | undefined): string {
  const totalText = total === undefined ? '*' : String(total);
  return rows === 0 ? `*/${totalText}` : `${offset}-${offset + rows - 1}/${totalText}`;
}

/** The rows as the client asked for them: an array, or the one row as an object. */
function shaped(rows: readonly Row[], answer: PgrstAnswer): unknown {
  const out = answer.stripNulls ? rows.map(withoutNulls) : rows;
  if (!answer.singular) return out;
  if (out.length !== 1) throw singularMismatch(out.length);
  return out[0];
}

function readReply(outcome: Extract<Outcome, { kind: 'rows' }>, answer: PgrstAnswer): PgrstReply {
  const { rows, total, offset } = outcome;
  if (total !== undefined && offset > total) {
    throw new RestError('offset_out_of_range', `offset ${offset} lies past the ${total} rows there are`, {
      details: { offset, total },
      headers: { 'Content-Range': `*/${total}` },
    });
  }
  const partial = total !== undefined && rows.length < total;
  const body = shaped(rows, answer);
  return {
    status: partial && !answer.singular ? 206 : 200,
    headers: { 'Content-Range': contentRange(offset, rows.length, total) },
    body: answer.headOnly ? undefined : body,
  };
}

/** A write's answer: its rows with `return=representation`, else no body. */
function writeReply(
  created: boolean,
  rows: readonly Row[] | undefined,
  count: number,
  answer: PgrstAnswer,
): PgrstReply {
  const headers = answer.count ? { 'Content-Range': `*/${count}` } : {};
  if (!answer.representation || rows === undefined) {
    return { status: created ? 201 : 204, headers, body: undefined };
  }
  return { status: created ? 201 : 200, headers, body: shaped(rows, answer) };
}

export function pgrstAnswer(outcome: Outcome, answer: PgrstAnswer): PgrstReply {
  switch (outcome.kind) {
    case 'rows':
      return readReply(outcome, answer);
    case 'row':
      return readReply({ kind: 'rows', rows: [outcome.row], total: undefined, offset: 0 }, answer);
    case 'count':
      return readReply({ kind: 'rows', rows: [], total: outcome.count, offset: 0 }, answer);
    case 'created':
      return writeReply(true, outcome.rows, outcome.rows.length, answer);
    case 'updated':
    case 'deleted':
      return writeReply(false, outcome.rows, outcome.count, answer);
  }
}
