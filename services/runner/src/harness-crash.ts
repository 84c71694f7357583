/** A code safe to show: a short identifier (`ENOENT`, `ERR_STREAM_PREMATURE_CLOSE`, `internal_error`), never free text. */
const SAFE_CODE = /^[A-Za-z0-9_.-]{1,48}$/;
const SAFE_NAME = /^[A-Za-z][A-Za-z0-9_]{0,47}$/;

/**
 * The run's message when its harness threw: the error's class and code, which say what kind of failure it was. Not
 * its message or stack, which may quote the run's environment (keys, URLs with credentials); those go to the log.
 */
export function harnessCrashMessage(err: unknown): string {
  const name = err instanceof Error && SAFE_NAME.test(err.name) ? err.name : undefined;
  const raw = (err as { code?: unknown } | null)?.code;
  const code =
    (typeof raw === 'string' || typeof raw === 'number') && SAFE_CODE.test(String(raw)) ? raw : undefined;
  const cause = [name, code].filter((part) => part !== undefined).join(' ');
  return cause ? `The agent harness crashed (${cause})` : 'The agent harness crashed';
}
