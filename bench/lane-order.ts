// The order of a phase's lanes within a round. A lane compared with the lane just before it (the
// session read with its contender's external-token read) swaps places with it every other round,
// A B, B A, A B, …, so that a steady drift of the machine (other work starting, the server's heap
// growing) does not always favour the same one of the two.

export interface Ordered {
  /** Swaps with the lane just before it in even rounds. */
  readonly alternate?: boolean;
}

export function roundOrder<T extends Ordered>(lanes: readonly T[], round: number): readonly T[] {
  const out = [...lanes];
  if (round % 2 === 1) return out;
  for (let i = 1; i < out.length; i++) {
    const lane = out[i] as T;
    // A lane already moved forward stays where it is; each pair swaps once.
    if (lane.alternate === true && (out[i - 1] as T).alternate !== true) {
      out[i] = out[i - 1] as T;
      out[i - 1] = lane;
      i++;
    }
  }
  return out;
}
