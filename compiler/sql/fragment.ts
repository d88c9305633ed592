// A dialect-neutral piece of SQL: text, bound values and auth_user slots. Placeholders are
// numbered only when the whole statement is rendered, so fragments compose freely and a value
// can never become SQL text (Kysely's append/appendValue).

import { claimValue, coerceClaim, usableText, type ClaimTarget } from '../semantics.js';
import type { AuthUser } from '../types.js';
import type { Dialect } from './dialect.js';

/** A value read from `auth_user` when the statement is rendered for a request. */
export type AuthSlot =
  | { readonly kind: 'id' }
  | { readonly kind: 'username' }
  | { readonly kind: 'is_admin' }
  | { readonly kind: 'is_authenticated' }
  /** A claim coerced to `as` (compiler/semantics.ts); `presence` is TRUE when set, NULL when absent or null. */
  | { readonly kind: 'claim'; readonly name: string; readonly as: ClaimTarget | 'presence' };

export type SqlPart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'value'; readonly value: unknown; readonly cast?: string }
  | { readonly kind: 'auth'; readonly slot: AuthSlot; readonly cast?: string };

export interface SqlFragment {
  readonly parts: readonly SqlPart[];
}

export const EMPTY_FRAGMENT: SqlFragment = Object.freeze({ parts: Object.freeze([]) });

/** Mutable writer used while compiling; `build()` returns a frozen fragment. */
export class SqlBuilder {
  readonly #parts: SqlPart[] = [];
  readonly dialect: Dialect;

  constructor(dialect: Dialect) {
    this.dialect = dialect;
  }

  append(text: string): this {
    this.#parts.push({ kind: 'text', text });
    return this;
  }

  /** Quotes an identifier for the dialect. Callers pass only names checked against the schema. */
  appendIdent(name: string): this {
    return this.append(this.dialect.quoteIdent(name));
  }

  appendValue(value: unknown, cast?: string): this {
    this.#parts.push(cast === undefined ? { kind: 'value', value } : { kind: 'value', value, cast });
    return this;
  }

  appendAuth(slot: AuthSlot, cast?: string): this {
    this.#parts.push(cast === undefined ? { kind: 'auth', slot } : { kind: 'auth', slot, cast });
    return this;
  }

  appendFragment(fragment: SqlFragment): this {
    this.#parts.push(...fragment.parts);
    return this;
  }

  /** Appends fragments separated by `separator` text. */
  appendJoined(fragments: readonly SqlFragment[], separator: string): this {
    fragments.forEach((f, i) => {
      if (i > 0) this.append(separator);
      this.appendFragment(f);
    });
    return this;
  }

  build(): SqlFragment {
    return Object.freeze({ parts: Object.freeze([...this.#parts]) });
  }
}

export interface RenderedSql {
  readonly text: string;
  readonly values: readonly unknown[];
}

export function authSlotValue(slot: AuthSlot, user: AuthUser): unknown {
  switch (slot.kind) {
    case 'id':
      return user.id;
    case 'username':
      return usableText(user.username);
    case 'is_admin':
      return user.is_admin;
    case 'is_authenticated':
      return user.is_authenticated;
    case 'claim': {
      const raw = claimValue(user.claims, slot.name);
      if (slot.as === 'presence') return raw === null ? null : true;
      return coerceClaim(raw, slot.as);
    }
  }
}

/**
 * Numbers the placeholders and binds values; auth slots are read from `user`.
 * A fragment with auth slots rendered without a user is a programming error.
 */
export function renderSql(dialect: Dialect, fragment: SqlFragment, user?: AuthUser): RenderedSql {
  let text = '';
  const values: unknown[] = [];
  for (const part of fragment.parts) {
    if (part.kind === 'text') {
      text += part.text;
      continue;
    }
    let value: unknown;
    if (part.kind === 'value') value = part.value;
    else if (user === undefined) throw new Error('renderSql: auth slot without a user');
    else value = authSlotValue(part.slot, user);
    values.push(dialect.bindValue(value));
    text += dialect.placeholder(values.length, part.cast);
  }
  return { text, values };
}

/**
 * Static SQL with bound values, as a tagged template: the literal text is written as is (trusted
 * constants only), every `${…}` becomes a parameter — `boundSql(dialect)\`SELECT … WHERE id = ${id}\``.
 */
export const boundSql =
  (dialect: Dialect) =>
  (strings: TemplateStringsArray, ...values: readonly unknown[]): RenderedSql => {
    const builder = new SqlBuilder(dialect);
    strings.forEach((text, i) => {
      builder.append(text);
      if (i < values.length) builder.appendValue(values[i]);
    });
    return renderSql(dialect, builder.build());
  };

/** A SQL literal for PostgreSQL DDL (CREATE POLICY cannot take parameters). */
export function postgresLiteral(value: unknown, cast?: string): string {
  const text = literalText(value);
  return cast === undefined ? text : `${text}::${cast}`;
}

function literalText(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('postgresLiteral: not a finite number');
    // `-1::bigint` would cast before negating; parenthesised it reads as the value it is.
    return value < 0 ? `(${String(value)})` : String(value);
  }
  if (typeof value === 'string') {
    // E'' reads the same whatever standard_conforming_strings says, so backslashes stay literal.
    const quoted = value.replaceAll("'", "''");
    return value.includes('\\') ? `E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
  }
  throw new Error(`postgresLiteral: cannot inline a ${typeof value}`);
}

/** Renders a fragment with its values inlined as literals (PostgreSQL DDL); no auth slots allowed. */
export function renderInlinePostgres(fragment: SqlFragment): string {
  return fragment.parts
    .map((part) => {
      if (part.kind === 'text') return part.text;
      if (part.kind === 'auth') throw new Error('renderInlinePostgres: auth slot in DDL');
      return postgresLiteral(part.value, part.cast);
    })
    .join('');
}
