// Waiting for a state another process reaches (statements cancelled, log lines written): probed
// again and again until it holds, with a generous bound that only a broken case reaches.

const PROBE_EVERY_MS = 20;

/** Resolves once `probe` is true; rejects, naming `what`, if it is still false after `limitMs`. */
export async function pollUntil(
  what: string,
  probe: () => Promise<boolean> | boolean,
  limitMs = 15_000,
): Promise<void> {
  const until = performance.now() + limitMs;
  for (;;) {
    if (await probe()) return;
    if (performance.now() > until) throw new Error(`still not the case after ${limitMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
  }
}
