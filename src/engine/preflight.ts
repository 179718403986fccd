/**
 * Before a run: can we connect to every replica at all? A target that
 * refuses connections should fail in a second with a message naming the URL,
 * not after a whole phase of ECONNREFUSED. A TCP connect (not an HTTP
 * request) keeps the server's request counts untouched. For https the TLS
 * handshake is part of connecting: a certificate the run would refuse on
 * every request (self-signed, wrong host, expired) fails here the same way,
 * naming the TLS error and -k.
 *
 * HTTP/2 with prior knowledge (h2c: --http2 or grpc:// over cleartext) is
 * checked as curl --http2-prior-knowledge would fail: send the client
 * connection preface and expect the server's SETTINGS frame first. A server
 * that only speaks HTTP/1.1 answers 400, closes or says nothing; undici's
 * h2 client does not survive such a peer well, and every request would fail
 * anyway, so the run stops here with one line naming the target.
 *
 * Each probe also says which address it reached, so that two URLs naming
 * one server (127.0.0.1 and localhost) can be told apart from replicas, and
 * for h2c the streams the server allows at once (its SETTINGS), so that the
 * run never puts more on one session than the server takes: Node would hold
 * the rest in the client, where an attempt counted as sent is not.
 */
import { connect, isIP, type Socket } from 'node:net'
import { connect as connectTls, type TLSSocket } from 'node:tls'
import { TargetUnreachableError } from '../core/errors.js'
import { isTlsError, tlsConnectOptions, tlsFailure, type TlsSettings } from './tls-options.js'

export interface PreflightOptions {
  /** -k, --cacert, --cert/--key, --cname: the TLS the run's connections will use. */
  tls?: TlsSettings
  /** The run speaks HTTP/2: cleartext origins must speak it with prior knowledge (h2c); a TLS one that chooses it by ALPN must send its SETTINGS. */
  h2c?: boolean
  /** How each origin is named in messages (the target URL's own scheme, e.g. grpc://), by index. */
  names?: readonly string[]
}

/** What the probe of one origin found. */
export interface Reached {
  /** The address its connection reached ("127.0.0.1:8080", "[::1]:8080"). */
  address: string
  /** h2c: the server's SETTINGS_MAX_CONCURRENT_STREAMS, or null (not h2c, or no limit sent). */
  maxConcurrentStreams: number | null
}

/** Resolves with what each origin's probe found, by index. */
export function checkReachable(origins: readonly string[], timeoutMs: number, options: PreflightOptions = {}): Promise<Reached[]> {
  return Promise.all(origins.map((origin, i) => probe(origin, options.names?.[i] ?? origin, timeoutMs, options)))
}

/** The h2 client connection preface (RFC 9113 3.4) and an empty SETTINGS frame. */
const H2_PREFACE = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])])
const FRAME_HEADER_BYTES = 9
const SETTINGS_FRAME = 4
/** RFC 9113 6.5.2. */
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3

function probe(origin: string, name: string, timeoutMs: number, options: PreflightOptions): Promise<Reached> {
  const url = new URL(origin)
  const tls = url.protocol === 'https:'
  const port = Number(url.port || (tls ? 443 : 80))
  const host = url.hostname.replace(/^\[|\]$/g, '')
  return new Promise((resolve, reject) => {
    const socket: Socket = tls
      ? connectTls({ host, port, ...tlsConnectOptions(options.tls ?? {}, host), ...(options.h2c ? { ALPNProtocols: ['h2', 'http/1.1'] } : {}) })
      : connect({ host, port })
    let connected = false
    let speaking = false
    const fail = (reason: string): void => {
      socket.destroy()
      reject(new TargetUnreachableError(reason))
    }
    socket.setTimeout(timeoutMs, () =>
      fail(speaking ? notH2(name, `no HTTP/2 SETTINGS within ${timeoutMs} ms`) : `cannot connect to ${name} (no answer within ${timeoutMs} ms): is the target running?`),
    )
    socket.once('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? err.message
      // The TCP connection was made: what failed is the TLS handshake (a certificate error has no 'connect' before it either, so look at the code).
      if (speaking && !(tls && isTlsError(code))) fail(notH2(name, `connection failed: ${code}`))
      else if (tls && (connected || isTlsError(code))) fail(tlsFailure(name, err))
      else fail(`cannot connect to ${name} (${code}): is the target running?`)
    })
    socket.once('connect', () => (connected = true))
    socket.once(tls ? 'secureConnect' : 'connect', () => {
      const peer = peerAddress(socket)
      // Over TLS, an h2 server's SETTINGS also say it accepted the handshake: a TLS 1.3 server refuses a
      // client certificate (or its absence) only after the client has finished its side of it.
      const h2 = tls ? (socket as TLSSocket).alpnProtocol === 'h2' : options.h2c === true
      if (!h2) {
        socket.destroy()
        return resolve({ address: peer, maxConcurrentStreams: null })
      }
      speaking = true
      expectSettings(socket, (maxConcurrentStreams) => {
        socket.destroy()
        resolve({ address: peer, maxConcurrentStreams: tls ? null : maxConcurrentStreams })
      }, (why) => fail(notH2(name, why)))
    })
  })
}

function peerAddress(socket: Socket): string {
  const address = socket.remoteAddress ?? '?'
  return `${isIP(address) === 6 ? `[${address}]` : address}:${socket.remotePort ?? '?'}`
}

/** Sends the h2 preface; `ok` (with the server's stream limit) if the first frame back is SETTINGS on stream 0, else `bad` with what came instead. */
function expectSettings(socket: Socket, ok: (maxConcurrentStreams: number | null) => void, bad: (why: string) => void): void {
  let got = Buffer.alloc(0)
  socket.on('data', (chunk: Buffer) => {
    got = Buffer.concat([got, chunk])
    if (got.length < FRAME_HEADER_BYTES) return
    const isSettings = got[3] === SETTINGS_FRAME && (got.readUInt32BE(5) & 0x7fffffff) === 0
    // The whole SETTINGS payload, to read the stream limit from it.
    if (isSettings && got.length < FRAME_HEADER_BYTES + got.readUIntBE(0, 3)) return
    socket.removeAllListeners('data')
    if (isSettings) return ok(maxStreamsOf(got.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + got.readUIntBE(0, 3))))
    const text = got.subarray(0, 64).toString('latin1')
    bad(text.startsWith('HTTP/1.') ? `it answered ${text.split('\r')[0]}` : 'its first frame was not SETTINGS')
  })
  socket.once('end', () => bad('it closed the connection'))
  socket.write(H2_PREFACE)
}

/** SETTINGS_MAX_CONCURRENT_STREAMS from a SETTINGS payload (6-byte id/value pairs), or null when the server sets none. */
function maxStreamsOf(payload: Buffer): number | null {
  let limit: number | null = null
  for (let at = 0; at + 6 <= payload.length; at += 6) if (payload.readUInt16BE(at) === SETTINGS_MAX_CONCURRENT_STREAMS) limit = payload.readUInt32BE(at + 2)
  return limit
}

const notH2 = (name: string, why: string): string => `${name} does not speak HTTP/2 (${why}): is it an HTTP/1.1-only server?`

