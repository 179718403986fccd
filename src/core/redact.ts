/**
 * Credentials never reach a file or a terminal: every header map and URL
 * that goes into a RunResult (and from there into every output) passes
 * through here first.
 */

const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']

const REDACTED = '***'

/**
 * Headers as one map, the values of credential headers (and of any `extra`
 * name, case-insensitive) replaced by `***`. Repeated names are joined with
 * ", " as HTTP folds them, so no value is silently dropped.
 */
export function redactHeaders(headers: Array<[string, string]>, extra: string[] = []): Record<string, string> {
  const secret = new Set([...SECRET_HEADERS, ...extra.map((name) => name.trim().toLowerCase())])
  const out: Record<string, string> = {}
  for (const [name, value] of headers) {
    if (secret.has(name.toLowerCase())) out[name] = REDACTED
    else out[name] = name in out ? `${out[name]}, ${value}` : value
  }
  return out
}

// scheme://user:password@ - the password runs to the last '@' before the
// path, as the WHATWG URL parser reads it.
const USERINFO_PASSWORD_RE = /^([a-z][a-z0-9+.-]*:\/\/[^/?#:@]*):[^/?#]*@/i

/**
 * `http://user:password@host/` -> `http://user:***@host/`. Works on the text
 * as given (no URL normalisation), so the URL still reads as the user typed it.
 */
export function redactUrl(url: string): string {
  return url.replace(USERINFO_PASSWORD_RE, `$1:${REDACTED}@`)
}
