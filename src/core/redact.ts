/**
 * Credentials never reach a file or a terminal: every header map and URL
 * that goes into a RunResult (and from there into every output) passes
 * through here first.
 */

/**
 * The one rule for what looks like a credential, for header and gRPC
 * metadata names and for query and fragment parameter names alike: the
 * name, lower-cased, holds one of these anywhere (`Authorization`,
 * `X-Authorization`, `Authentication`, `X-Access-Key`, `x-token-bin`,
 * `?pw=`, `?X-Amz-Signature=`, `?apiKey=`, `Set-Cookie`, `session_id`,
 * `?code=` of OAuth). Over-redacting a harmless name (`Idempotency-Key`,
 * `?country_code=`) costs a `***` in a report, and `--show-secret NAME`
 * keeps it; under-redacting puts a secret in a CI artefact.
 * docs/reliability.md lists them: keep the two the same.
 */
export const SECRET_NAME_PARTS = ['auth', 'token', 'key', 'secret', 'pass', 'pw', 'session', 'cookie', 'sig', 'credential', 'jwt', 'code'] as const

const SECRET_NAME_RE = new RegExp(SECRET_NAME_PARTS.join('|'))

const REDACTED = '***'

/** Names kept as they are (--show-secret), lower-cased, for the lookups below. */
const shownSet = (shown: readonly string[]): Set<string> => new Set(shown.map((name) => name.trim().toLowerCase()))

/** True when `name` (a header, metadata or parameter name) looks like a credential and is not one of the `shown` names. */
export function isSecretName(name: string, shown: readonly string[] = []): boolean {
  const lower = name.trim().toLowerCase()
  return SECRET_NAME_RE.test(lower) && !shownSet(shown).has(lower)
}

/**
 * Headers as one map, the values of credential headers (and of any `extra`
 * name, case-insensitive) replaced by `***`, except the `shown` names.
 * Repeated names are joined with ", " as HTTP folds them, so no value is
 * silently dropped.
 */
export function redactHeaders(headers: Array<[string, string]>, extra: readonly string[] = [], shown: readonly string[] = []): Record<string, string> {
  const secret = shownSet(extra)
  const kept = shownSet(shown)
  const out: Record<string, string> = {}
  for (const [name, value] of headers) {
    const lower = name.trim().toLowerCase()
    if (secret.has(lower) || (SECRET_NAME_RE.test(lower) && !kept.has(lower))) out[name] = REDACTED
    else out[name] = name in out ? `${out[name]}, ${value}` : value
  }
  return out
}

/**
 * scheme:[//]userinfo@ as the WHATWG URL parser reads it: leading C0
 * controls and spaces skipped, any number of slashes or backslashes after
 * the scheme, and the userinfo running to the last '@' before the path,
 * query or fragment.
 */
const USERINFO_RE = /^([\x00-\x20]*[a-z][a-z0-9+.-]*:[/\\]*)[^/\\?#]*@/i

/**
 * Every userinfo (`user:password@`, or a token alone as the user name)
 * becomes `***@`, and the value of every query or fragment parameter whose
 * name looks like a credential becomes `***`. Works on the text as given
 * (no URL normalisation), so the URL still reads as the user typed it; the
 * text is then read back as the URL parser would (tabs and newlines dropped,
 * ...) and, if a credential would still be there, the parsed URL is
 * redacted and returned instead.
 */
export function redactUrl(url: string, shown: readonly string[] = []): string {
  const isSecret = (name: string): boolean => isSecretParam(name, shown)
  const text = redactText(url, isSecret)
  return leaksWhenParsed(text, isSecret) ? redactParsed(url, isSecret) : text
}

type IsSecret = (name: string) => boolean

function redactText(url: string, isSecret: IsSecret): string {
  const hash = url.indexOf('#')
  const beforeHash = hash < 0 ? url : url.slice(0, hash)
  const fragment = hash < 0 ? '' : `#${redactParams(url.slice(hash + 1), isSecret)}`
  const query = beforeHash.indexOf('?')
  const head = (query < 0 ? beforeHash : beforeHash.slice(0, query)).replace(USERINFO_RE, `$1${REDACTED}@`)
  return query < 0 ? `${head}${fragment}` : `${head}?${redactParams(beforeHash.slice(query + 1), isSecret)}${fragment}`
}

/** `a=1&token=x;sig=y` -> `a=1&token=***;sig=***`: separators and order kept. */
function redactParams(params: string, isSecret: IsSecret): string {
  return params.replace(/([^&;=]*)=([^&;]*)/g, (whole, name: string) => (isSecret(name) ? `${name}=${REDACTED}` : whole))
}

/** A parameter's name as the URL parser decodes it (`%74oken` is `token`), judged by the one rule. */
function isSecretParam(name: string, shown: readonly string[]): boolean {
  let decoded = name.replace(/\+/g, ' ')
  try {
    decoded = decodeURIComponent(decoded)
  } catch {
    // A malformed escape: judge the name as written.
  }
  return isSecretName(decoded, shown)
}

function leaksWhenParsed(text: string, isSecret: IsSecret): boolean {
  const url = parse(text)
  if (url === null) return false
  if ((url.username !== '' && url.username !== REDACTED) || url.password !== '') return true
  return [url.searchParams, new URLSearchParams(url.hash.slice(1))].some((params) => [...params].some(([name, value]) => isSecret(name) && value !== REDACTED))
}

function redactParsed(raw: string, isSecret: IsSecret): string {
  const url = parse(raw)
  if (url === null) return REDACTED
  if (url.username !== '' || url.password !== '') {
    url.username = REDACTED
    url.password = ''
  }
  for (const [name] of [...url.searchParams]) if (isSecret(name)) url.searchParams.set(name, REDACTED)
  if (url.hash.includes('=')) url.hash = redactParams(url.hash.slice(1), isSecret)
  return url.href
}

function parse(text: string): URL | null {
  try {
    return new URL(text)
  } catch {
    return null
  }
}
