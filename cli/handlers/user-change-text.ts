// Wording shared by the `auth user` commands that change an account.

/** `1 session revoked`, `2 sessions revoked`. */
export const sessionsRevoked = (n: number): string => `${n} session${n === 1 ? '' : 's'} revoked`;
