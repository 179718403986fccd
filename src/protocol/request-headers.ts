/**
 * Helpers over undici's header forms (object, flat array, iterable of
 * pairs): the hedging code has to add a header to a copy of a request
 * without knowing which form the caller used; and a lookup over an
 * answer's raw headers, for the protocols that read them.
 */
import type { Dispatcher } from 'undici'

type Headers = Dispatcher.DispatchOptions['headers']

/** Flattens any header form into undici's raw form [name, value, name, value, ...]. */
function flattenHeaders(headers: Headers): string[] {
  const out: string[] = []
  if (headers == null) return out
  if (Array.isArray(headers)) {
    for (const item of headers as unknown[]) {
      if (Array.isArray(item)) pushHeader(out, String(item[0]), item[1] as string | string[] | undefined)
      else out.push(String(item))
    }
    return out
  }
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const [name, value] of headers as Iterable<[string, string | string[] | undefined]>) pushHeader(out, name, value)
    return out
  }
  for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) pushHeader(out, name, value)
  return out
}

function pushHeader(out: string[], name: string, value: string | string[] | undefined): void {
  if (value === undefined) return
  if (Array.isArray(value)) for (const v of value) out.push(name, v)
  else out.push(name, String(value))
}

export function withHeaders(headers: Headers, extra: readonly string[]): string[] {
  const out = flattenHeaders(headers)
  out.push(...extra)
  return out
}

export function hasHeader(headers: Headers, name: string): boolean {
  const flat = flattenHeaders(headers)
  const wanted = name.toLowerCase()
  for (let i = 0; i < flat.length; i += 2) if (flat[i]!.toLowerCase() === wanted) return true
  return false
}

/** A header lookup over whatever shape the transport hands over (lower-case names). */
export type HeaderLookup = (name: string) => string | undefined

/** A lookup over raw headers as undici reads them ([name, value, ...] buffers). */
export function rawHeaderLookup(raw: readonly (Buffer | string)[]): HeaderLookup {
  return (name) => {
    for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toString('latin1').toLowerCase() === name) return raw[i + 1]!.toString('latin1')
    return undefined
  }
}
