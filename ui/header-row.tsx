// The header of a grid whose rows are named things (tables, columns) and whose columns are
// actions: the rows' heading, then one column heading per action.

export interface HeaderRowProps {
  readonly first: string;
  readonly names: readonly string[];
}

export function HeaderRow(props: HeaderRowProps) {
  return (
    <thead>
      <tr>
        <th scope="col">{props.first}</th>
        {props.names.map((name) => (
          <th scope="col" key={name}>
            {name}
          </th>
        ))}
      </tr>
    </thead>
  );
}
