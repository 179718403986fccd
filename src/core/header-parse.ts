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

/** A header undici would refuse on every request (UND_ERR_INVALID_ARG), refused once, before anything is sent. */
export function checkHeader(name: string, value: string): [string, string] {
  if (!isToken(name)) throw new UsageError(`malformed header name "${oneLine(name)}" (letters, digits and !#$%&'*+-.^_\`|~ only)`)
  if (/[\r\n\0]/.test(value)) throw new UsageError(`header "${name}" has a line break or NUL in its value`)
  return [name, value]
}

function firstWord(text: string): string {
  const word = /^\s*\S*/.exec(text)![0]
  return word.length < text.length ? `${word} ...` : word
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, 80)
}
