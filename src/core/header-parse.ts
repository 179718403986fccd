/** Parsing of -H "Name: value" (curl/hey syntax). */
import { UsageError } from './errors.js'

/** RFC 9110 token characters, the only ones allowed in a header name. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** An RFC 9110 token: what a header name (and a method) may be made of. */
export function isToken(text: string): boolean {
  return TOKEN.test(text)
}

export function parseHeader(raw: string): [string, string] {
  const text = String(raw)
  const colon = text.indexOf(':')
  // Without a colon the value cannot be told from the name: show only the first word (it may be "Authorization Bearer <token>").
  if (colon <= 0) throw new UsageError(`malformed header "${oneLine(firstWord(text))}" (use -H "Name: value")`)
  return checkHeader(text.slice(0, colon).trim(), text.slice(colon + 1).trim())
}

/** A control character (RFC 9110 5.5: a field value has none but HTAB): a line break would inject headers, the rest are refused by servers. */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/

export function hasControlCharacter(value: string): boolean {
  return CONTROL.test(value)
}

/**
 * Headers that frame the request or manage the connection, which the client
 * sets itself (RFC 9110 7.6.1, RFC 9112 6): given with -H, every request would
 * fail on the client or the connection would be misread. Why, per name.
 */
const CLIENT_OWNED: Readonly<Record<string, string>> = {
  'transfer-encoding': "the request is framed by its body's length",
  'content-length': 'it is computed from the request body',
  'keep-alive': "connection reuse is the client's (--disable-keepalive for a connection per request)",
  upgrade: 'protocol upgrades are not supported (--http2 speaks HTTP/2)',
  expect: '100-continue is not supported: the body is sent with the request',
  'proxy-connection': 'it is not a header for a server',
  'http2-settings': 'it belongs to an upgrade to HTTP/2, which is not supported (--http2 speaks HTTP/2 from the start)',
}

/** A header undici would refuse on every request (UND_ERR_INVALID_ARG), refused once, before anything is sent. */
export function checkHeader(name: string, value: string): [string, string] {
  if (!isToken(name)) throw new UsageError(`malformed header name "${oneLine(name)}" (letters, digits and !#$%&'*+-.^_\`|~ only)`)
  if (hasControlCharacter(value))
    throw new UsageError(`header "${name}" has a control character in its value (a line break, NUL, DEL or another byte below 0x20 but tab)`)
  const key = name.toLowerCase()
  const why = CLIENT_OWNED[key]
  if (why !== undefined) throw new UsageError(`header "${name}" is set by hedgebench itself: ${why}`)
  // HTTP/2 forbids any other TE (Node threw it, uncaught, on the first request); HTTP/1.1's client decodes no transfer coding.
  if (key === 'te' && !/^\s*trailers\s*$/i.test(value))
    throw new UsageError(`header "TE: ${oneLine(value).slice(0, 40)}" is not supported (only "trailers": the client decodes no transfer coding)`)
  if (key === 'connection' && !/^\s*(close|keep-alive)\s*$/i.test(value)) {
    throw new UsageError(
      `header "Connection: ${oneLine(value).slice(0, 40)}" is not supported (only "close" or "keep-alive": upgrades and hop-by-hop options are the client's)`,
    )
  }
  return [name, value]
}

function firstWord(text: string): string {
  const word = /^\s*\S*/.exec(text)![0]
  return word.length < text.length ? `${word} ...` : word
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, 80)
}
