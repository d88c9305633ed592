// How a cache hears about changes made outside this process: the policies (policies/policy-cache.ts)
// and the users' states (auth/user-states.ts).

export type ChangeSource =
  /**
   * A push source (LISTEN/NOTIFY): `subscribe` registers the callback, returns a closer; the
   * callback gets the notification's payload, undefined after a (re)connect (anything changed).
   */
  | { readonly kind: 'push'; subscribe(onChange: (payload?: string) => void): { close(): Promise<void> } }
  /** Re-read the rows periodically and compare them. */
  | { readonly kind: 'poll'; readonly intervalMs?: number };
