/**
 * Credentials never reach a file or a terminal: every header map and URL
 * that goes into a RunResult (and from there into every output) passes
 * through here first.
 */

const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key', 'apikey', 'private-token', 'x-amz-security-token'])

/**
 * Header (and gRPC metadata) names that carry tokens by convention:
 * x-auth-token, x-access-token, x-csrf-token, x-goog-api-key, client-secret,
 * a gRPC `x-token-bin`. Over-redacting a harmless header costs a `***` in a
 * report; under-redacting puts a secret in a CI artefact.
 */
const SECRET_HEADER_SUFFIX_RE = /(^|[-_])(token|secret|password|passwd|signature|credentials?|api[-_]?key|auth|session[-_]?id)(-bin)?$/

/**
 * Query (and fragment) parameter names that carry credentials, as a suffix
 * of the lower-cased name: token, access_token, x_token, api_key, apiKey,
 * X-Amz-Signature, sig, client_secret, password, code (OAuth), ...
 */
const SECRET_PARAM_SUFFIX_RE = /(token|key|secret|password|passwd|pwd|pass|signature|sig|auth|authorization|code|credentials?|session|sessionid|jwt)$/

const REDACTED = '***'

export function isSecretHeader(name: string): boolean {
  const lower = name.trim().toLowerCase()
  return SECRET_HEADERS.has(lower) || SECRET_HEADER_SUFFIX_RE.test(lower)
}

/**
 * Headers as one map, the values of credential headers (and of any `extra`
 * name, case-insensitive) replaced by `***`. Repeated names are joined with
 * ", " as HTTP folds them, so no value is silently dropped.
 */
export function redactHeaders(headers: Array<[string, string]>, extra: string[] = []): Record<string, string> {
  const secret = new Set(extra.map((name) => name.trim().toLowerCase()))
  const out: Record<string, string> = {}
  for (const [name, value] of headers) {
    if (secret.has(name.toLowerCase()) || isSecretHeader(name)) out[name] = REDACTED
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
export function redactUrl(url: string): string {
  const text = redactText(url)
  return leaksWhenParsed(text) ? redactParsed(url) : text
}

function redactText(url: string): string {
  const hash = url.indexOf('#')
  const beforeHash = hash < 0 ? url : url.slice(0, hash)
  const fragment = hash < 0 ? '' : `#${redactParams(url.slice(hash + 1))}`
  const query = beforeHash.indexOf('?')
  const head = (query < 0 ? beforeHash : beforeHash.slice(0, query)).replace(USERINFO_RE, `$1${REDACTED}@`)
  return query < 0 ? `${head}${fragment}` : `${head}?${redactParams(beforeHash.slice(query + 1))}${fragment}`
}

/** `a=1&token=x;sig=y` -> `a=1&token=***;sig=***`: separators and order kept. */
function redactParams(params: string): string {
  return params.replace(/([^&;=]*)=([^&;]*)/g, (whole, name: string) => (isSecretParam(name) ? `${name}=${REDACTED}` : whole))
}

function isSecretParam(name: string): boolean {
  let decoded = name.replace(/\+/g, ' ')
  try {
    decoded = decodeURIComponent(decoded)
  } catch {
    // A malformed escape: judge the name as written.
  }
  return SECRET_PARAM_SUFFIX_RE.test(decoded.trim().toLowerCase())
}

function leaksWhenParsed(text: string): boolean {
  const url = parse(text)
  if (url === null) return false
  if ((url.username !== '' && url.username !== REDACTED) || url.password !== '') return true
  return [url.searchParams, new URLSearchParams(url.hash.slice(1))].some((params) =>
    [...params].some(([name, value]) => isSecretParam(name) && value !== REDACTED),
  )
}

function redactParsed(raw: string): string {
  const url = parse(raw)
  if (url === null) return REDACTED
  if (url.username !== '' || url.password !== '') {
    url.username = REDACTED
    url.password = ''
  }
  for (const [name] of [...url.searchParams]) if (isSecretParam(name)) url.searchParams.set(name, REDACTED)
  if (url.hash.includes('=')) url.hash = redactParams(url.hash.slice(1))
  return url.href
}

function parse(text: string): URL | null {
  try {
    return new URL(text)
  } catch {
    return null
  }
}
