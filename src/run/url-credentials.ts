/**
 * Credentials in a URL (http://user:password@host/) become a Basic
 * Authorization header, as hey (Go's net/http) and curl send them, decoded
 * from the URL's percent-encoding; an Authorization given with -H wins, as
 * in both. Without this they were dropped without a word: a request's
 * origin has no user part, so the target saw no credentials at all.
 *
 * Every attempt of a request carries the same headers, whichever replica it
 * goes to, so the URLs must agree: credentials on some replicas and not on
 * others (or different ones) would send one replica's secret to another.
 */
import { UsageError } from '../core/errors.js'

export function withUrlCredentials(urls: readonly string[], headers: Array<[string, string]>): Array<[string, string]> {
  const parsed = urls.map((u) => new URL(u))
  if (parsed.some((u) => (u.username || u.password) && u.protocol !== 'http:' && u.protocol !== 'https:')) {
    throw new UsageError('a gRPC target takes no user:password@ (ghz has none either): send credentials as metadata, -m \'{"authorization": "..."}\'')
  }
  const userinfo = parsed.map((u) => (u.username || u.password ? `${decoded(u.username)}:${decoded(u.password)}` : null))
  if (userinfo.every((c) => c === null)) return headers
  if (headers.some(([name]) => name.toLowerCase() === 'authorization')) return headers
  if (new Set(userinfo).size > 1) {
    throw new UsageError(
      'the URLs carry different credentials (user:password@): every copy of a request carries the same headers, so give the same in each URL, or -H "Authorization: ..."',
    )
  }
  return [...headers, ['authorization', `Basic ${Buffer.from(userinfo[0]!, 'utf8').toString('base64')}`]]
}

/** Percent-decoded, as Go's url.User does; a malformed escape (`%zz`) is bad input, not a URIError's stack. */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part)
  } catch {
    throw new UsageError('a URL\'s user:password@ has a malformed %-escape (encode "%" itself as %25)')
  }
}
