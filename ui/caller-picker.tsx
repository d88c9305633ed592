// Whom to decide for: anonymous, an admin, a stored user (id or username) or token claims.

import { useState } from 'preact/hooks';
import type { Caller } from './api.js';

type Kind = Caller['kind'];

/** The caller of the picker's fields, or a sentence saying what is missing. */
function callerOf(kind: Kind, ref: string, claims: string): Caller | string {
  switch (kind) {
    case 'anonymous':
    case 'admin':
      return { kind };
    case 'user':
      return ref.trim() === '' ? 'give the id or username of a stored user' : { kind, ref: ref.trim() };
    case 'claims':
      try {
        const parsed: unknown = JSON.parse(claims);
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
          return 'the claims must be a JSON object';
        }
        return { kind, claims: parsed as Record<string, unknown> };
      } catch {
        return 'the claims must be a JSON object';
      }
  }
}

export function CallerPicker(props: {
  readonly id: string;
  readonly onChange: (caller: Caller | string) => void;
}) {
  const [kind, setKind] = useState<Kind>('anonymous');
  const [ref, setRef] = useState('');
  const [claims, setClaims] = useState('{"user_id": 1}');
  const update = (k: Kind, r: string, c: string): void => {
    setKind(k);
    setRef(r);
    setClaims(c);
    props.onChange(callerOf(k, r, c));
  };
  return (
    <fieldset class="caller">
      <legend>Caller</legend>
      <label for={`${props.id}-kind`}>Decide for</label>
      <select
        id={`${props.id}-kind`}
        value={kind}
        onChange={(e) => update(e.currentTarget.value as Kind, ref, claims)}
      >
        <option value="anonymous">anonymous</option>
        <option value="user">a stored user</option>
        <option value="claims">a user by token claims</option>
        <option value="admin">an admin</option>
      </select>
      {kind === 'user' ? (
        <>
          <label for={`${props.id}-ref`}>User id or username</label>
          <input
            id={`${props.id}-ref`}
            value={ref}
            onInput={(e) => update(kind, e.currentTarget.value, claims)}
          />
        </>
      ) : null}
      {kind === 'claims' ? (
        <>
          <label for={`${props.id}-claims`}>Claims (JSON)</label>
          <input
            id={`${props.id}-claims`}
            value={claims}
            onInput={(e) => update(kind, ref, e.currentTarget.value)}
          />
        </>
      ) : null}
    </fieldset>
  );
}
