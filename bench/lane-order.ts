// The order of a phase's lanes within a round. A lane compared with a lane before it (the session
// read and the `/rest/v1` reads with their contender's seed read, the `/rest/v1` POST with the
// seed POST) is marked `alternate`: a lane that is not, with the alternating lanes right after
// it, forms a group that runs in reverse order every other round — A B, B A, A B, …; A B C, C B A,
// … — so that a steady drift of the machine (other work starting, the server's heap growing) does
// not always favour the same one of them, and a lane stays as far from its reference either way.

export interface Ordered {
  /** Belongs to the group of the last lane before it that does not alternate. */
  readonly alternate?: boolean;
}

export function roundOrder<T extends Ordered>(lanes: readonly T[], round: number): readonly T[] {
  if (round % 2 === 1) return [...lanes];
  const out: T[] = [];
  let group: T[] = [];
  const flush = (): void => {
    out.push(...group.reverse());
    group = [];
  };
  for (const lane of lanes) {
    // An alternating lane with no lane before it to follow stays where it is, alone.
    if (lane.alternate !== true || group.length === 0) flush();
    group.push(lane);
    if (lane.alternate === true && group.length === 1) flush();
  }
  flush();
  return out;
}
