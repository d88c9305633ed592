// A command that has said everything it had to say and ends with an exit code of its own (not an
// error: `policy test` exits 4 when a case failed). cli/main.ts returns the code and prints nothing.

export class ExitStatus extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}
