/**
 * An HTTP/1.1 request as the bytes written to the socket, built once per
 * dispatch options object and kept with it: a run dispatches the same
 * options for every request to an origin, so the hot path writes a Buffer
 * it already has (no string building, no encoding per request).
 *
 * The head is what undici's Client writes (host, connection, the caller's
 * headers, content-length when there is a body or the method expects one),
 * and the same headers are refused with undici's errors.
 */
import { errors, type Dispatcher } from 'undici'
import { hasControlCharacter } from '../core/header-parse.js'

export interface WireRequest {
  /** Head and body, as written. */
  readonly bytes: Buffer
  /** A HEAD: its answer has no body. */
  readonly head: boolean
  /** `connection: close` was asked for (reset, or the caller's header): the connection ends with this exchange. */
  readonly close: boolean
}

const built = new WeakMap<Dispatcher.DispatchOptions, WireRequest>()

/** The request for `opts`, on a connection to `host` (the URL's host, with a port if not the default). */
export function requestBytes(opts: Dispatcher.DispatchOptions, host: string): WireRequest {
  let wire = built.get(opts)
  if (wire === undefined) {
    wire = build(opts, host)
    built.set(opts, wire)
  }
  return wire
}

/** Methods whose requests carry a body by their meaning: content-length is sent even when it is 0 (as undici). */
const EXPECTS_PAYLOAD = new Set(['PUT', 'POST', 'PATCH', 'QUERY', 'PROPFIND', 'PROPPATCH'])

function build(opts: Dispatcher.DispatchOptions, defaultHost: string): WireRequest {
  const method = opts.method ?? 'GET'
  if (method === 'CONNECT' || opts.upgrade) throw new errors.NotSupportedError('CONNECT and upgrades are not supported')
  let host = defaultHost
  let close = opts.reset === true
  let lines = ''
  for (const [name, value] of headerPairs(opts.headers)) {
    const key = name.toLowerCase()
    if (hasControlCharacter(value)) throw new errors.InvalidArgumentError(`invalid ${key} header`)
    if (key === 'host') host = value
    else if (key === 'content-length')
      continue // from the body, below
    else if (key === 'connection') {
      const v = value.toLowerCase()
      if (v !== 'close' && v !== 'keep-alive') throw new errors.InvalidArgumentError('invalid connection header')
      if (v === 'close') close = true
    } else if (key === 'transfer-encoding' || key === 'keep-alive' || key === 'upgrade') throw new errors.InvalidArgumentError(`invalid ${key} header`)
    else if (key === 'expect') throw new errors.NotSupportedError('expect header not supported')
    else lines += `${name}: ${value}\r\n`
  }
  const body = bodyBuffer(opts.body)
  const length = body === null ? 0 : body.length
  const contentLength = length > 0 || EXPECTS_PAYLOAD.has(method) ? `content-length: ${length}\r\n` : ''
  const head = `${method} ${opts.path} HTTP/1.1\r\nhost: ${host}\r\nconnection: ${close ? 'close' : 'keep-alive'}\r\n${lines}${contentLength}\r\n`
  const headBytes = Buffer.from(head, 'latin1')
  return { bytes: body === null || length === 0 ? headBytes : Buffer.concat([headBytes, body]), head: method === 'HEAD', close }
}

/** undici's header forms: a flat [name, value, ...] array, an array of pairs, or an object. */
export function headerPairs(headers: Dispatcher.DispatchOptions['headers']): Array<[string, string]> {
  if (headers == null) return []
  const pairs: Array<[string, string]> = []
  if (Array.isArray(headers)) {
    if (headers.length > 0 && Array.isArray(headers[0])) {
      for (const [k, v] of headers as unknown as Array<[string, string]>) pairs.push([String(k), String(v)])
    } else {
      const flat = headers as unknown as string[]
      if (flat.length % 2 !== 0) throw new errors.InvalidArgumentError('headers array must be even')
      for (let i = 0; i < flat.length; i += 2) pairs.push([String(flat[i]), String(flat[i + 1])])
    }
    return pairs
  }
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (v === undefined) continue
    for (const one of Array.isArray(v) ? v : [v]) pairs.push([k, String(one)])
  }
  return pairs
}

export function bodyBuffer(body: Dispatcher.DispatchOptions['body']): Buffer | null {
  if (body == null) return null
  if (typeof body === 'string') return Buffer.from(body)
  if (Buffer.isBuffer(body)) return body
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  throw new errors.NotSupportedError('only string and Buffer request bodies are supported')
}
