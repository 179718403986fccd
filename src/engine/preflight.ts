/**
 * Before a run: can we connect to every replica at all, and does it speak
 * the protocol the run will? A target that refuses connections should fail
 * in a second with a message naming the URL, not after a whole phase of
 * ECONNREFUSED. For https the TLS handshake is part of connecting: a
 * certificate the run would refuse on every request (self-signed, wrong
 * host, expired) fails here the same way, naming the TLS error and -k.
 *
 * What each origin speaks, and why it is looked at here:
 * - h2c (--http2 or grpc:// over cleartext) is checked as curl
 *   --http2-prior-knowledge would fail: send the client connection preface
 *   and expect the server's SETTINGS frame first. A server that only speaks
 *   HTTP/1.1 answers 400, closes or says nothing; every request would fail
 *   anyway, so the run stops here with one line naming the target. One that
 *   closes at once may be a TLS port given a cleartext scheme: a TLS
 *   handshake then tells, and the line names the scheme to use.
 * - TLS with --http2 (or grpcs://): ALPN must choose h2, offered as undici's
 *   connector offers it; a server that chose HTTP/1.1 would carry the whole
 *   run over HTTP/1.1 while the report said HTTP/2. Its SETTINGS must then
 *   come too: a TLS 1.3 server refuses a client certificate (or its absence)
 *   only after the client has finished its side of the handshake.
 * - HTTP/1.1 over cleartext: an h2c-only server (nghttpd, nginx's h2c port,
 *   node:http2's createServer) answers every HTTP/1.1 request with its
 *   SETTINGS and a GOAWAY, and a run would end with 100 % socket errors. The
 *   probe sends a request with an invalid Content-Length, which an HTTP/1.1
 *   server must refuse with 400 before any handler sees it (RFC 9112 6.3),
 *   so no server counts it as a request; an h2 server's frames are told from
 *   any "HTTP/1.x" answer by their first bytes.
 * - HTTP/1.1 over TLS: an h2-only server refuses the ALPN offer of http/1.1
 *   (node:http2's createSecureServer: a fatal alert), or, as nghttpd does,
 *   completes the handshake with no protocol chosen and closes the
 *   connection on the first request, so that every request of the run would
 *   fail with a socket error. A close without a word after such a handshake
 *   is told from an HTTP/1.1 server's by a second handshake offering h2 too:
 *   the h2-only server chooses it.
 * Nothing here starts a request a server would count: the cross-check
 * (run/server-check.ts) stays exact.
 *
 * Each probe also says which address it reached, so that two URLs naming
 * one server (127.0.0.1 and localhost) can be told apart from replicas, and
 * for h2 the streams the server allows at once (its SETTINGS), so that the
 * run never puts more on one session than the server takes: Node would hold
 * the rest in the client, where an attempt counted as sent is not.
 */
import { connect, isIP, type Socket } from 'node:net'
import { connect as connectTls, type TLSSocket } from 'node:tls'
import { TargetUnreachableError, UsageError } from '../core/errors.js'
import type { WireProtocol } from '../results/run-result.js'
import { certificateRefused, handshakeSeen, isTlsError, tlsConnectOptions, tlsFailure, type TlsSettings } from './tls-options.js'

export interface PreflightOptions {
  /** -k, --cacert, --cert/--key, --cname: the TLS the run's connections will use. */
  tls?: TlsSettings
  /** The run speaks HTTP/2: with prior knowledge (h2c) on cleartext origins, by ALPN over TLS. */
  http2?: boolean
  /** How each origin is named in messages (the target URL's own scheme, e.g. grpc://), by index. */
  names?: readonly string[]
}

/** What the probe of one origin found. */
export interface Reached {
  /** The address its connection reached ("127.0.0.1:8080", "[::1]:8080"). */
  address: string
  /** h2: the server's SETTINGS_MAX_CONCURRENT_STREAMS, or null (not h2, or no limit sent). */
  maxConcurrentStreams: number | null
  /** What the run's connections to it speak. */
  protocol: WireProtocol
}

/**
 * How long the probes wait, for a run whose -t is `timeoutMs`: -t, but at least 1 s and at most 5 s. The
 * probe asks whether the target is there at all; a -t of 20 ms bounds each request, which the run then
 * measures (timeouts are a result), and a busy machine can take longer than that just to connect.
 */
export function preflightTimeoutMs(timeoutMs: number): number {
  return Math.min(Math.max(timeoutMs, 1000), 5000)
}

/** Resolves with what each origin's probe found, by index. */
export function checkReachable(origins: readonly string[], timeoutMs: number, options: PreflightOptions = {}): Promise<Reached[]> {
  return Promise.all(origins.map((origin, i) => probe(origin, options.names?.[i] ?? origin, timeoutMs, options)))
}

/** The h2 client connection preface (RFC 9113 3.4) and an empty SETTINGS frame. */
const H2_PREFACE = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])])
const FRAME_HEADER_BYTES = 9
const SETTINGS_FRAME = 4
const GOAWAY_FRAME = 7
/** RFC 9113 6.5.2. */
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3
/** RFC 9113 4.2: SETTINGS_MAX_FRAME_SIZE's initial value; a frame header announcing more is not one. */
const MAX_FIRST_FRAME = 16_384
/** ALPN as undici's connector offers it (core/connect.js): the server chooses as it will for the run. */
const ALPN_H2 = ['http/1.1', 'h2']
const ALPN_H1 = ['http/1.1']

interface Target {
  url: URL
  host: string
  port: number
  name: string
  timeoutMs: number
  options: PreflightOptions
}

async function probe(origin: string, name: string, timeoutMs: number, options: PreflightOptions): Promise<Reached> {
  const url = new URL(origin)
  const tls = url.protocol === 'https:'
  const target: Target = { url, host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || (tls ? 443 : 80)), name, timeoutMs, options }
  const socket = await open(target, tls)
  try {
    const address = peerAddress(socket)
    if (tls) return { address, ...(await overTls(socket as TLSSocket, target)) }
    if (options.http2) return { address, maxConcurrentStreams: await h2Settings(socket, target), protocol: 'h2c' }
    await expectHttp1(socket, target)
    return { address, maxConcurrentStreams: null, protocol: 'http/1.1' }
  } finally {
    socket.destroy()
  }
}

/**
 * TLS: HTTP/1.1 unless the run speaks h2, which ALPN must then have chosen;
 * then its SETTINGS say the streams it takes at once, as h2c's do. Either
 * way something is read back: a TLS 1.3 server refuses a client
 * certificate (or its absence) only after the client's side of the
 * handshake is done, so a handshake that seemed to succeed is not yet one
 * the run can use.
 */
async function overTls(socket: TLSSocket, target: Target): Promise<Omit<Reached, 'address'>> {
  if (!target.options.http2) {
    await expectTlsAnswer(socket, target)
    return { maxConcurrentStreams: null, protocol: 'http/1.1' }
  }
  const chosen = socket.alpnProtocol
  if (chosen !== 'h2')
    throw new UsageError(`${target.name} does not speak HTTP/2 over TLS (ALPN chose ${chosen || 'no protocol'}, not h2)${withoutH2(target.name)}`)
  return { maxConcurrentStreams: await h2Settings(socket, target), protocol: 'h2' }
}

/** Connects (TLS: with the run's ALPN offer), or fails with one line saying why. */
function open(target: Target, tls: boolean): Promise<Socket> {
  const { host, port, name, timeoutMs, options } = target
  return new Promise((resolve, reject) => {
    const socket: Socket = tls
      ? connectTls({ host, port, ...tlsConnectOptions(options.tls ?? {}, host), ALPNProtocols: options.http2 ? ALPN_H2 : ALPN_H1 })
      : connect({ host, port })
    let connected = false
    const fail = (err: Error): void => {
      socket.destroy()
      reject(err)
    }
    socket.setTimeout(timeoutMs, () => fail(new TargetUnreachableError(`cannot connect to ${name} (no answer within ${timeoutMs} ms): is the target running?`)))
    socket.once('error', (err: NodeJS.ErrnoException) => fail(connectError(target, tls ? (socket as TLSSocket) : null, connected, err)))
    socket.once('connect', () => (connected = true))
    socket.once(tls ? 'secureConnect' : 'connect', () => {
      socket.setTimeout(0)
      socket.removeAllListeners('error')
      // From here a failure is what the probe heard (exchange), never an uncaught 'error'.
      socket.on('error', () => {})
      resolve(socket)
    })
  })
}

function connectError(target: Target, tls: TLSSocket | null, connected: boolean, err: NodeJS.ErrnoException): Error {
  const { name } = target
  const code = err.code ?? err.message
  // The TCP connection was made (a certificate error has no 'connect' before it either, so look at the code): what failed is the TLS handshake.
  if (!tls || !(connected || isTlsError(code))) return new TargetUnreachableError(`cannot connect to ${name} (${code}): is the target running?`)
  if (isNotTls(code)) return new UsageError(`${name} does not answer in TLS (${code}): is it a cleartext port? use ${cleartextName(name)}`)
  if (/NO_APPLICATION_PROTOCOL/.test(code))
    return new UsageError(`${name} speaks HTTP/2 only (TLS ALPN offered http/1.1 and the server refused it): add --http2`)
  return new TargetUnreachableError(tlsFailure(name, err, handshakeSeen(tls, target.options.tls ?? {})))
}

function peerAddress(socket: Socket): string {
  const address = socket.remoteAddress ?? '?'
  return `${isIP(address) === 6 ? `[${address}]` : address}:${socket.remotePort ?? '?'}`
}

/** What came back on a probe connection before the reader had enough, or the connection ended. */
interface Heard {
  bytes: Buffer
  /** Nothing more came within the timeout (else: enough came, or the connection ended). */
  timedOut: boolean
  /** Why the connection failed, when it did. */
  error?: NodeJS.ErrnoException
}

/** Writes `hello`, then collects what the server sends until `enough(bytes)`, the end, or the timeout. */
function exchange(socket: Socket, hello: Buffer, timeoutMs: number, enough: (bytes: Buffer) => boolean): Promise<Heard> {
  return new Promise((resolve) => {
    let bytes = Buffer.alloc(0)
    const onData = (chunk: Buffer): void => {
      bytes = Buffer.concat([bytes, chunk])
      if (enough(bytes)) done(false)
    }
    const onClose = (): void => done(false)
    const onError = (err: NodeJS.ErrnoException): void => done(false, err)
    const done = (timedOut: boolean, error?: NodeJS.ErrnoException): void => {
      clearTimeout(timer)
      socket.off('data', onData).off('end', onClose).off('error', onError)
      resolve({ bytes, timedOut, ...(error ? { error } : {}) })
    }
    const timer = setTimeout(() => done(true), timeoutMs)
    socket.on('data', onData).once('end', onClose).once('error', onError)
    socket.write(hello)
  })
}

interface FrameHeader {
  length: number
  type: number
  stream: number
}

const frameHeader = (b: Buffer): FrameHeader | null =>
  b.length < FRAME_HEADER_BYTES ? null : { length: b.readUIntBE(0, 3), type: b[3]!, stream: b.readUInt32BE(5) & 0x7fffffff }

/** The whole first frame when it is SETTINGS (its payload holds the stream limit); else its header says enough. */
const settingsRead = (b: Buffer): boolean => {
  const f = frameHeader(b)
  return f !== null && (f.type !== SETTINGS_FRAME || b.length >= FRAME_HEADER_BYTES + f.length)
}

/** Sends the h2 preface: the server's stream limit if the first frame back is SETTINGS on stream 0, else one line saying what came instead. */
async function h2Settings(socket: Socket, target: Target): Promise<number | null> {
  const { name, timeoutMs } = target
  const heard = await exchange(socket, H2_PREFACE, timeoutMs, settingsRead)
  const f = frameHeader(heard.bytes)
  if (f && f.type === SETTINGS_FRAME && f.stream === 0 && heard.bytes.length >= FRAME_HEADER_BYTES + f.length) {
    return maxStreamsOf(heard.bytes.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + f.length))
  }
  if (target.url.protocol === 'https:') refusedAfterHandshake(socket as TLSSocket, target, heard)
  if (heard.timedOut && heard.bytes.length === 0) throw new TargetUnreachableError(notH2(name, `no HTTP/2 SETTINGS within ${timeoutMs} ms`))
  const text = heard.bytes.subarray(0, 64).toString('latin1')
  if (text.startsWith('HTTP/1.')) throw new UsageError(notH2(name, `it answered ${text.split('\r')[0]}`))
  if (heard.bytes.length > 0) throw new UsageError(notH2(name, 'its first frame was not SETTINGS'))
  // Closed without a word: what a TLS server does with cleartext it cannot read.
  if (target.url.protocol === 'http:' && (await speaksTls(target))) {
    throw new UsageError(
      `${name} speaks TLS, not HTTP/2 in cleartext (it closed the connection on the h2 preface, and a TLS handshake succeeded): use ${tlsName(name)}`,
    )
  }
  throw new UsageError(notH2(name, 'it closed the connection'))
}

/** SETTINGS_MAX_CONCURRENT_STREAMS from a SETTINGS payload (6-byte id/value pairs), or null when the server sets none. */
function maxStreamsOf(payload: Buffer): number | null {
  let limit: number | null = null
  for (let at = 0; at + 6 <= payload.length; at += 6) if (payload.readUInt16BE(at) === SETTINGS_MAX_CONCURRENT_STREAMS) limit = payload.readUInt32BE(at + 2)
  return limit
}

/** A TLS handshake with the origin succeeds (any certificate): it is a TLS port. */
const speaksTls = async (target: Target): Promise<boolean> => (await alpnChoice(target)) !== null

/**
 * The protocol ALPN chooses when offered http/1.1 and h2 as the run with
 * --http2 offers them (false: none), in a handshake that accepts any
 * certificate; null when no handshake succeeds. It asks what the port
 * speaks, never whether the run's TLS settings are accepted.
 */
function alpnChoice(target: Target): Promise<string | false | null> {
  return new Promise((resolve) => {
    const { host, port } = target
    const socket = connectTls({ host, port, rejectUnauthorized: false, ALPNProtocols: ALPN_H2, ...(isIP(host) ? {} : { servername: host }) })
    const done = (chosen: string | false | null): void => {
      socket.destroy()
      resolve(chosen)
    }
    socket.setTimeout(target.timeoutMs, () => done(null))
    socket.once('error', () => done(null))
    socket.once('secureConnect', () => done(socket.alpnProtocol))
  })
}

/** A request every HTTP/1.1 server must refuse with 400 before any handler sees it (RFC 9112 6.3: an invalid Content-Length). */
const http1Probe = (host: string): Buffer => Buffer.from(`OPTIONS * HTTP/1.1\r\nHost: ${host}\r\nContent-Length: invalid\r\n\r\n`, 'latin1')

/** Enough to tell "HTTP/1.x" (7 bytes) from an h2 frame header (9). */
const answerRead = (b: Buffer): boolean => b.length >= FRAME_HEADER_BYTES

/**
 * A TLS 1.3 server's refusal of the client's certificate (or its absence),
 * which arrives after the handshake seemed done: its alert, or (a server
 * that sends none) a close without a word after it asked for a
 * certificate; then the run is told so, not that the server speaks no
 * HTTP/2 or gRPC.
 */
function refusedAfterHandshake(socket: TLSSocket, target: Target, heard: Heard): void {
  const seen = handshakeSeen(socket, target.options.tls ?? {})
  if (heard.error && (isTlsError(heard.error.code ?? '') || seen.askedForCert)) throw new TargetUnreachableError(tlsFailure(target.name, heard.error, seen))
  if (heard.bytes.length === 0 && !heard.timedOut && seen.askedForCert) throw new TargetUnreachableError(certificateRefused(target.name, seen))
}

/**
 * HTTPS/1.1: the request every server refuses (http1Probe), to hear a TLS
 * 1.3 refusal of the client's certificate before the run, and an h2-only
 * server: its frames in answer, or (nghttpd) no ALPN protocol chosen for
 * http/1.1, a close without a word, and h2 chosen when offered.
 */
async function expectTlsAnswer(socket: TLSSocket, target: Target): Promise<void> {
  const heard = await exchange(socket, http1Probe(target.url.host), target.timeoutMs, answerRead)
  refusedAfterHandshake(socket, target, heard)
  refuseH2Answer(heard, target)
  const closedSilently = heard.bytes.length === 0 && !heard.timedOut
  if (socket.alpnProtocol === false && closedSilently && (await alpnChoice(target)) === 'h2') {
    throw new UsageError(
      `${target.name} speaks HTTP/2 only (TLS ALPN chose no protocol for http/1.1, the server closed the connection on an HTTP/1.1 request, and chose h2 when offered it): add --http2`,
    )
  }
}

/** Cleartext HTTP/1.1: refused when the answer is an h2 server's SETTINGS or GOAWAY; anything else (400, a close, silence) lets the run go on. */
async function expectHttp1(socket: Socket, target: Target): Promise<void> {
  refuseH2Answer(await exchange(socket, http1Probe(target.url.host), target.timeoutMs, answerRead), target)
}

/** An HTTP/1.1 request answered with an h2 server's SETTINGS or GOAWAY: it speaks HTTP/2 only. */
function refuseH2Answer(heard: Heard, target: Target): void {
  const f = frameHeader(heard.bytes)
  if (f && (f.type === SETTINGS_FRAME || f.type === GOAWAY_FRAME) && f.stream === 0 && f.length <= MAX_FIRST_FRAME) {
    const frame = f.type === SETTINGS_FRAME ? 'SETTINGS' : 'GOAWAY'
    throw new UsageError(`${target.name} speaks HTTP/2 only (it answered an HTTP/1.1 request with an HTTP/2 ${frame} frame): add --http2`)
  }
}

const notH2 = (name: string, why: string): string => `${name} does not speak HTTP/2 (${why})${withoutH2(name)}`

/** What to do about an origin that does not speak h2: a gRPC target is no gRPC server; an HTTP one is run without --http2. */
const withoutH2 = (name: string): string => (/^grpcs?:/.test(name) ? ': not a gRPC server' : ': is it an HTTP/1.1-only server? (run it without --http2)')

/** The same origin named with the TLS scheme (grpc -> grpcs, http -> https), and back. */
const tlsName = (name: string): string => name.replace(/^(grpc|http):/, '$1s:')
const cleartextName = (name: string): string => name.replace(/^(grpc|http)s:/, '$1:')

/** OpenSSL's codes for a peer that did not answer a ClientHello with TLS records. */
const isNotTls = (code: string): boolean => /WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|HTTP_REQUEST|RECORD_LAYER_FAILURE/.test(code)
