/**
 * Failures of the machine hedgebench runs on, not of the target: no file
 * descriptor left for a socket (EMFILE: the process's `ulimit -n`; ENFILE:
 * the system's), no local port left to connect from (EADDRNOTAVAIL). Such a
 * request never reached the target, so it is counted apart (the
 * generator's failures), never as a target error, in a replica's error
 * table, or as evidence to eject a replica.
 */
const LOCAL_CODES = new Set(['EMFILE', 'ENFILE', 'EADDRNOTAVAIL'])

/** The local failure's code when this error (or what it wraps) is one, else null. */
export function localFailureCode(err: unknown): string | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && LOCAL_CODES.has(code)) return code
  }
  return null
}
