/**
 * A failure the CLI explains in one line (plus an optional next step) and exits on; anything else is a bug and
 * prints its message only. Exit codes: 1 an error or a failed deployment, 2 a wait that timed out.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly next?: string,
    readonly exitCode = 1,
    /** What --json prints on stdout for this failure (the API's error body, the failed deployment). */
    readonly json?: unknown,
  ) {
    super(message);
  }
}
