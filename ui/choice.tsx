// A labelled choice among a list of words (tables, actions, methods): the label, the select and an
// option per word, each option showing its own value.

import type { Ref } from 'preact';

export interface ChoiceProps<T extends string> {
  readonly id: string;
  readonly label: string;
  readonly value: T;
  readonly options: readonly T[];
  readonly onChange: (value: T) => void;
  /** The select itself, e.g. to focus it. */
  readonly selectRef?: Ref<HTMLSelectElement>;
}

export function Choice<T extends string>(props: ChoiceProps<T>) {
  return (
    <>
      <label for={props.id}>{props.label}</label>
      <select
        id={props.id}
        ref={props.selectRef ?? null}
        value={props.value}
        // The select offers only `options`: its value is one of them.
        onChange={(e) => props.onChange(e.currentTarget.value as T)}
      >
        {props.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </>
  );
}
