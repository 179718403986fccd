/**
 * A scripted HTTP/2 peer for frame-by-frame tests of hedgebench's own client
 * (src/engine/h2-client.ts), the way nghttp2's tests/nghttp2_session_test.c
 * drive a session: bytes in, the client's frames out, the outcome asserted.
 *
 * The peer is a raw-frame server on 127.0.0.1 (h2c, or TLS with ALPN h2 and a
 * throwaway certificate) that reads the client's preface and keeps every
 * frame the client writes (a request's HEADERS decoded to its fields once its
 * block ended), lets the test write exact bytes, and hands the client's next
 * frame of a type within a bounded wait that fails the test with what did
 * arrive instead of hanging. sync() is a barrier: a PING the client answers
 * only after everything it read before, so "the client wrote no X" is a fact
 * once sync() returns, not a guess after a sleep.
 *
 * The client side: an H2Client on the peer, and requests whose handlers write
 * down the legacy callbacks they hear, in order (Exchange).
 */
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { createServer as createTlsServer } from 'node:tls'
import { buildConnector, type Dispatcher } from 'undici'
import { H2Client } from '../../src/engine/h2-client.js'
import { CLIENT_PREFACE, codeName, Flag, frame, FrameReader, FrameType, settingsFrame } from '../../src/engine/h2-frames.js'
import { HpackDecoder } from '../../src/engine/hpack.js'
import type { Abort } from '../../src/engine/forwarding-handler.js'
import { skipWithout } from './required-tool.js'
import { NO_OPENSSL, selfSigned } from './tls-cert.js'

/** How long a test waits for any one frame or outcome before it fails, naming what it waited for. */
export const WAIT_MS = 2000
/** Every peer test's own limit: a broken client fails it, named, instead of hanging the run. */
export const TEST_TIMEOUT_MS = 8000

/** Frame type names for messages. */
const TYPE_NAMES = ['DATA', 'HEADERS', 'PRIORITY', 'RST_STREAM', 'SETTINGS', 'PUSH_PROMISE', 'PING', 'GOAWAY', 'WINDOW_UPDATE', 'CONTINUATION']
export const typeName = (type: number): string => TYPE_NAMES[type] ?? `0x${type.toString(16)}`

/** One frame the client wrote. */
export interface PeerFrame {
  readonly type: number
  readonly flags: number
  readonly streamId: number
  readonly payload: Buffer
  /** A HEADERS frame's request fields, decoded with its CONTINUATIONs once END_HEADERS came; null until then and for other frames. */
  fields: Array<[string, string]> | null
}

/** A frame as one line for a failure message. */
export function describe(f: PeerFrame): string {
  const extra =
    f.type === FrameType.RST_STREAM || f.type === FrameType.GOAWAY ? ` ${codeName(f.payload.readUInt32BE(f.type === FrameType.GOAWAY ? 4 : 0))}` : ''
  return `${typeName(f.type)}(flags 0x${f.flags.toString(16)}, stream ${f.streamId}, ${f.payload.length} octets${extra})`
}

/** Resolves with `p`, or fails naming `what` after `ms`. */
export function within<T>(p: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)
  })
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}

// ---- frames the peer writes ----

export const u32 = (...values: number[]): Buffer => {
  const b = Buffer.alloc(4 * values.length)
  for (const [i, v] of values.entries()) b.writeUInt32BE(v, 4 * i)
  return b
}

/** A DATA or HEADERS payload with PADDED: the pad length octet, the content, then `padLength` zero octets (`declared` overrides the octet). */
export function padded(content: Buffer, padLength: number, declared = padLength): Buffer {
  return Buffer.concat([Buffer.from([declared]), content, Buffer.alloc(padLength)])
}

export const ping = (data: Buffer, ack = false): Buffer => frame(FrameType.PING, ack ? Flag.ACK : 0, 0, data)
export const rst = (streamId: number, code: number): Buffer => frame(FrameType.RST_STREAM, 0, streamId, u32(code))
export const goaway = (lastStreamId: number, code: number): Buffer => frame(FrameType.GOAWAY, 0, 0, u32(lastStreamId, code))
export const windowUpdate = (streamId: number, increment: number): Buffer => frame(FrameType.WINDOW_UPDATE, 0, streamId, u32(increment))
export const settings = (pairs: ReadonlyArray<readonly [number, number]>): Buffer => settingsFrame(pairs)
export const data = (streamId: number, content: Buffer | string, flags = 0): Buffer => frame(FrameType.DATA, flags, streamId, Buffer.from(content))
/** HEADERS with a raw block (END_HEADERS unless `flags` says otherwise). */
export const headers = (streamId: number, block: Buffer, flags: number = Flag.END_HEADERS): Buffer => frame(FrameType.HEADERS, flags, streamId, block)
export const continuation = (streamId: number, block: Buffer, flags = 0): Buffer => frame(FrameType.CONTINUATION, flags, streamId, block)

/** HPACK: an indexed field (RFC 7541 6.1), for indices below 127. */
export const indexed = (index: number): Buffer => Buffer.from([0x80 | index])
/** HPACK: a literal field without indexing, new name, no Huffman (RFC 7541 6.2.2), strings below 127 octets. */
export function literal(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x00, name.length]), Buffer.from(name, 'latin1'), Buffer.from([value.length]), Buffer.from(value, 'latin1')])
}
/** An HPACK integer (RFC 7541 5.1) with a `prefix`-bit prefix, the first octet's other bits `flags`. */
export function hpackInt(n: number, prefix: number, flags: number): Buffer {
  const max = (1 << prefix) - 1
  if (n < max) return Buffer.from([flags | n])
  const out = [flags | max]
  let rest = n - max
  while (rest >= 128) {
    out.push((rest % 128) + 128)
    rest = Math.floor(rest / 128)
  }
  out.push(rest)
  return Buffer.from(out)
}

/** A literal field with a new one-octet name, no Huffman: without indexing (0x00) or with incremental indexing (0x40). */
export const longLiteral = (name: string, valueLength: number, flags = 0x00): Buffer =>
  Buffer.concat([Buffer.from([flags, 1]), Buffer.from(name), hpackInt(valueLength, 7, 0), Buffer.alloc(valueLength, 0x76)])

/** :status 200 (static index 8). */
export const STATUS_200 = indexed(8)

// ---- the peer ----

/** One connection the client opened to the peer. */
export class PeerConnection {
  /** Every frame the client wrote after its preface, in order. */
  readonly frames: PeerFrame[] = []
  /** The first 24 octets the client wrote. */
  preface: Buffer | null = null
  /** The first octets after the preface, as written: the client's first frames, byte for byte. */
  readonly rawAfterPreface: Buffer[] = []
  closed = false
  /** What the client wrote that is no HTTP/2 (a frame above 16,384 octets, a block that does not decode): every wait fails with it. */
  broken: string | null = null
  readonly #reader: FrameReader
  readonly #decoder = new HpackDecoder()
  /** A request's HEADERS whose block has not ended, and the parts so far. */
  #open: { frame: PeerFrame; parts: Buffer[] } | null = null
  /** Per type: how many of its frames next() has handed out. */
  readonly #taken = new Map<number, number>()
  readonly #waiters = new Set<() => void>()
  #pings = 0
  #pending = Buffer.alloc(0)

  constructor(readonly socket: Socket) {
    // At most 16,384 octets a frame, SETTINGS_MAX_FRAME_SIZE's initial value, which no test raises before the client
    // writes: a larger frame is the client's fault (or garbage where a frame header should be).
    this.#reader = new FrameReader({ onFrame: (type, flags, id, buf, start, end) => this.#frame(type, flags, id, Buffer.from(buf.subarray(start, end))) })
    socket.on('error', () => {})
    socket.on('data', (chunk: Buffer) => this.#read(chunk))
    socket.on('close', () => {
      this.closed = true
      this.#changed()
    })
  }

  #read(chunk: Buffer): void {
    let rest = chunk
    if (this.preface === null) {
      this.#pending = Buffer.concat([this.#pending, chunk])
      if (this.#pending.length < CLIENT_PREFACE.length) return
      this.preface = this.#pending.subarray(0, CLIENT_PREFACE.length)
      rest = this.#pending.subarray(CLIENT_PREFACE.length)
    }
    if (this.rawAfterPreface.length < 4) this.rawAfterPreface.push(Buffer.from(rest))
    try {
      if (this.broken === null) this.#reader.execute(rest)
    } catch (err) {
      this.broken = (err as Error).message
    }
    this.#changed()
  }

  #frame(type: number, flags: number, streamId: number, payload: Buffer): void {
    const f: PeerFrame = { type, flags, streamId, payload, fields: null }
    this.frames.push(f)
    if (type === FrameType.HEADERS) {
      let from = flags & Flag.PADDED ? 1 : 0
      if (flags & Flag.PRIORITY) from += 5
      const to = payload.length - (flags & Flag.PADDED ? payload[0]! : 0)
      this.#open = { frame: f, parts: [payload.subarray(from, to)] }
    } else if (type === FrameType.CONTINUATION && this.#open !== null) this.#open.parts.push(payload)
    else return
    if ((flags & Flag.END_HEADERS) === 0) return
    const raw = this.#decoder.decode(Buffer.concat(this.#open!.parts))
    const fields: Array<[string, string]> = []
    for (let i = 0; i < raw.length; i += 2) fields.push([raw[i]!.toString('latin1'), raw[i + 1]!.toString('latin1')])
    this.#open!.frame.fields = fields
    this.#open = null
  }

  #changed(): void {
    for (const w of [...this.#waiters]) w()
  }

  /** Writes exact bytes (frames built with the helpers above, or anything else). */
  write(...chunks: Buffer[]): void {
    this.socket.write(Buffer.concat(chunks))
  }

  /**
   * Writes `chunk` `times` times, waiting for the socket to drain when it is
   * full (half a gigabyte of DATA for a flow-control test never sits in
   * memory); fails if the connection closes first.
   */
  async pour(chunk: Buffer, times: number): Promise<void> {
    for (let i = 0; i < times; i++) {
      if (this.closed) throw new Error(`the connection closed after ${i} of ${times} writes; the client wrote: ${this.#log()}`)
      if (this.socket.write(chunk)) continue
      await new Promise<void>((resolve) => {
        const go = (): void => {
          this.socket.off('drain', go).off('close', go)
          resolve()
        }
        this.socket.on('drain', go).on('close', go)
      })
    }
  }

  /** The client's frames of `type` so far (and, if given, on `streamId`). */
  ofType(type: number, streamId?: number): PeerFrame[] {
    return this.frames.filter((f) => f.type === type && (streamId === undefined || f.streamId === streamId))
  }

  /** Waits (bounded) until `pick` returns a value; fails with `what` and the frames that did arrive. */
  waitFor<T>(what: string, pick: () => T | undefined, ms = WAIT_MS): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`timed out after ${ms} ms waiting for ${what}; the client wrote: ${this.#log()}`)), ms)
      const done = (err: Error | null, value?: T): void => {
        clearTimeout(timer)
        this.#waiters.delete(check)
        if (err !== null) reject(err)
        else resolve(value as T)
      }
      const check = (): void => {
        const value = pick()
        if (value !== undefined) return done(null, value)
        if (this.broken !== null)
          done(new Error(`the client wrote what is not HTTP/2 (${this.broken}) while the peer waited for ${what}; before it: ${this.#log()}`))
        else if (this.closed) done(new Error(`the connection closed while waiting for ${what}; the client wrote: ${this.#log()}`))
      }
      this.#waiters.add(check)
      check()
    })
  }

  /** The client's next frame of `type` (each handed out once, in order), within a bounded wait. */
  next(type: number, ms = WAIT_MS): Promise<PeerFrame> {
    return this.waitFor(`the client's next ${typeName(type)}`, () => this.#take(type), ms)
  }

  #take(type: number): PeerFrame | undefined {
    const taken = this.#taken.get(type) ?? 0
    const f = this.ofType(type)[taken]
    if (f !== undefined) this.#taken.set(type, taken + 1)
    return f
  }

  /** The client's HEADERS on `streamId`, with its block decoded. */
  request(streamId: number, ms = WAIT_MS): Promise<PeerFrame> {
    return this.waitFor(`HEADERS on stream ${streamId}`, () => this.ofType(FrameType.HEADERS, streamId).find((f) => f.fields !== null), ms)
  }

  /** The client's GOAWAY: its last stream id and error code. */
  async goaway(ms = WAIT_MS): Promise<{ lastStreamId: number; code: string }> {
    const f = await this.next(FrameType.GOAWAY, ms)
    return { lastStreamId: f.payload.readUInt32BE(0) & 0x7fffffff, code: codeName(f.payload.readUInt32BE(4)) }
  }

  /**
   * A barrier: a PING of our own, and its ACK. The client handles what it
   * reads in order and writes in order, so once the ACK is here every frame
   * it owed for what the peer wrote before is here too.
   */
  sync(ms = WAIT_MS): Promise<void> {
    return this.#barrier(false, ms)
  }

  /** A barrier that a closed connection also passes: the client went on (the PING's ACK) or ended the connection (its close). */
  settle(ms = WAIT_MS): Promise<void> {
    return this.#barrier(true, ms)
  }

  async #barrier(orClose: boolean, ms: number): Promise<void> {
    const id = u32(0xb0a7_0000 + ++this.#pings, 0x5eed)
    if (!this.closed) this.write(ping(id))
    const acked = (): boolean => this.frames.some((f) => f.type === FrameType.PING && (f.flags & Flag.ACK) !== 0 && f.payload.equals(id))
    await this.waitFor(`the ACK of a barrier PING${orClose ? ', or the close' : ''}`, () => ((orClose && this.closed) || acked() ? true : undefined), ms)
  }

  /** Sends the peer's SETTINGS and waits for the client's ACK of them. */
  async handshake(pairs: ReadonlyArray<readonly [number, number]> = []): Promise<void> {
    const acks = this.ofType(FrameType.SETTINGS).filter((f) => f.flags & Flag.ACK).length
    this.write(settings(pairs))
    await this.waitFor('the SETTINGS ACK', () => (this.ofType(FrameType.SETTINGS).filter((f) => f.flags & Flag.ACK).length > acks ? true : undefined))
  }

  /** Waits (bounded) for the client to close the connection. */
  async whenClosed(ms = WAIT_MS): Promise<void> {
    await this.waitFor('the client to close the connection', () => (this.closed ? true : undefined), ms)
  }

  #log(): string {
    return this.frames.length === 0 ? 'nothing' : this.frames.map(describe).join(', ')
  }
}

export type Transport = 'h2c' | 'TLS'

/** The raw-frame server: every connection the client opens, in order. */
export class H2Peer {
  readonly connections: PeerConnection[] = []
  readonly #waiters = new Set<() => void>()

  private constructor(
    readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(transport: Transport): Promise<H2Peer> {
    let peer: H2Peer | null = null
    const accept = (socket: Socket): void => {
      peer!.connections.push(new PeerConnection(socket))
      for (const w of [...peer!.#waiters]) w()
    }
    const server = transport === 'TLS' ? createTlsServer({ ...certificate()!, ALPNProtocols: ['h2'] }, accept) : createNetServer(accept)
    server.on('tlsClientError', () => {})
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const scheme = transport === 'TLS' ? 'https' : 'http'
    peer = new H2Peer(server, `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`)
    return peer
  }

  /** The client's `index`-th connection (from 0), once its preface arrived. */
  async connection(index = 0, ms = WAIT_MS): Promise<PeerConnection> {
    const opened = new Promise<PeerConnection>((resolve) => {
      const check = (): void => {
        const c = this.connections[index]
        if (c === undefined) return
        this.#waiters.delete(check)
        resolve(c)
      }
      this.#waiters.add(check)
      check()
    })
    const c = await within(opened, `connection ${index} of the client`, ms)
    return c.waitFor(`the client preface on connection ${index}`, () => (c.preface !== null ? c : undefined), ms)
  }

  close(): Promise<void> {
    for (const c of this.connections) c.socket.destroy()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

let cert: { key: Buffer; cert: Buffer } | null | undefined
/** The throwaway certificate, made once per test file (null without openssl). */
function certificate(): { key: Buffer; cert: Buffer } | null {
  if (cert === undefined) cert = selfSigned()
  return cert
}

/** An H2Client on the peer (TLS: ALPN h2, the throwaway certificate trusted), allowed `maxStreams` streams per connection. */
export function peerClient(peer: H2Peer, maxStreams = 100): H2Client {
  const tls = peer.origin.startsWith('https:')
  const connect = buildConnector(tls ? ({ allowH2: true, rejectUnauthorized: false } as buildConnector.BuildOptions) : {})
  return new H2Client(peer.origin, { connect, maxStreams })
}

/** A peer and a client on it, both closed after the test. */
export async function setUp(t: TestContext, transport: Transport, maxStreams = 100): Promise<{ peer: H2Peer; client: H2Client }> {
  const peer = await H2Peer.start(transport)
  const client = peerClient(peer, maxStreams)
  t.after(async () => {
    await within(client.destroy(), 'the client to be destroyed')
    await peer.close()
  })
  return { peer, client }
}

/** The peer's answer that ends stream `id`: 200, no body. */
export const answer = (id: number): Buffer => headers(id, STATUS_200, Flag.END_HEADERS | Flag.END_STREAM)

/**
 * A client with one request (path '/a' unless `opts` say otherwise) on
 * stream 1 of a connection whose SETTINGS exchange (with `pairs`) is over.
 */
export async function opened(
  t: TestContext,
  transport: Transport,
  pairs: ReadonlyArray<readonly [number, number]> = [],
  opts: Partial<Dispatcher.DispatchOptions> = { path: '/a' },
): Promise<{ peer: H2Peer; client: H2Client; c: PeerConnection; ex: Exchange }> {
  const { peer, client } = await setUp(t, transport)
  const ex = new Exchange(client, opts)
  const c = await peer.connection()
  await c.handshake(pairs)
  await c.request(1)
  return { peer, client, c, ex }
}

/**
 * The client ended the connection for what the peer wrote: one GOAWAY(0,
 * `code`), its last frame, then the close; the request in flight failed
 * (HTTP2_COMPRESSION_ERROR for an HPACK error, else HTTP2_PROTOCOL_ERROR, or
 * the limit's `kind`) after what its handler heard `before`.
 */
export async function connectionError(c: PeerConnection, ex: Exchange, code: string, before: string[] = ['connect'], kind?: string): Promise<void> {
  await c.settle()
  const goaways = c.ofType(FrameType.GOAWAY).map((f) => `${f.payload.readUInt32BE(0)} ${codeName(f.payload.readUInt32BE(4))}`)
  assert.deepEqual(goaways, [`0 ${code}`])
  await c.whenClosed()
  assert.equal(c.frames.at(-1)!.type, FrameType.GOAWAY, 'the GOAWAY is the last frame')
  // The kind its requests fail under: HPACK's, a flow-control breach's (engine/h2-limits.ts), or the protocol's.
  const error = kind ?? { COMPRESSION_ERROR: 'HTTP2_COMPRESSION_ERROR', FLOW_CONTROL_ERROR: 'h2: flow-control error' }[code] ?? 'HTTP2_PROTOCOL_ERROR'
  assert.deepEqual(await ex.ended(), [...before, `error ${error}`])
}

/** Counts the client's events of these names (e.g. 'stream-reset', 'stream-resent'). */
export function countEvents(client: H2Client, ...names: string[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const name of names) {
    counts[name] = 0
    client.on(name, () => counts[name]!++)
  }
  return counts
}

// ---- the client side: one request and what its handler heard ----

/** Data chunks longer than this are written down by their length only (a flow-control test reads half a gigabyte). */
const SHOWN_DATA = 64

/** One request dispatched on an H2Client; `events` are its handler's callbacks in order. */
export class Exchange {
  /** 'connect', 'headers STATUS name: value, ...', 'data TEXT' (or 'data N octets'), 'complete' (+ trailers), 'error CODE', 'refused'. */
  readonly events: string[] = []
  /** Octets of body received, and in how many onData calls. */
  received = 0
  chunks = 0
  abort: Abort | null = null
  error: Error | null = null
  readonly #ended: Promise<void>

  constructor(client: H2Client, opts: Partial<Dispatcher.DispatchOptions> = {}) {
    let ended: () => void = () => {}
    this.#ended = new Promise<void>((resolve) => {
      ended = resolve
    })
    const handler = {
      onConnect: (abort: Abort) => {
        this.abort = abort
        this.events.push('connect')
      },
      onHeaders: (status: number, raw: Buffer[]) => {
        this.events.push(`headers ${status}${pairs(raw)}`)
        return true
      },
      onData: (chunk: Buffer) => {
        this.received += chunk.length
        this.chunks++
        this.events.push(chunk.length > SHOWN_DATA ? `data ${chunk.length} octets` : `data ${chunk.toString('latin1')}`)
        return true
      },
      onComplete: (trailers: Buffer[] | null) => {
        this.events.push(`complete${pairs(trailers ?? [])}`)
        ended()
      },
      onError: (err: Error) => {
        this.error = err
        this.events.push(`error ${(err as { code?: string }).code ?? err.message}`)
        ended()
      },
      onRequestRefused: () => {
        this.events.push('refused')
      },
    }
    const full = { origin: '', path: '/', method: 'GET', ...opts } as Dispatcher.DispatchOptions
    client.dispatch(full, handler as unknown as Dispatcher.DispatchHandler)
  }

  /** Waits (bounded) for its end: onComplete or onError. */
  ended(what = 'the request to end', ms = WAIT_MS): Promise<string[]> {
    return within(this.#ended, `${what} (its handler heard: ${this.events.join(', ') || 'nothing'})`, ms).then(() => this.events)
  }

  /** The events without the (many) data lines. */
  get outline(): string[] {
    return this.events.filter((e) => !e.startsWith('data '))
  }
}

function pairs(raw: Buffer[]): string {
  const out: string[] = []
  for (let i = 0; i < raw.length; i += 2) out.push(`${raw[i]!.toString('latin1')}: ${raw[i + 1]!.toString('latin1')}`)
  return out.length === 0 ? '' : ` ${out.join(', ')}`
}

// ---- tests over both transports ----

export interface PeerTestOptions {
  /** Also over TLS (the representative set). */
  tls?: boolean
  /** Its own time limit, for a test that moves half a gigabyte (TEST_TIMEOUT_MS by default). */
  timeoutMs?: number
  /** Marks the test todo on a transport (a rule src breaks, or a TLS path not finished). */
  todo?: Partial<Record<Transport, string>>
}

/** Registers `fn` as a test over h2c and, with `tls`, over TLS too (skipped without openssl), each with its own time limit. */
export function peerTest(name: string, fn: (t: TestContext, transport: Transport) => Promise<void>, options: PeerTestOptions = {}): void {
  const transports: Transport[] = options.tls ? ['h2c', 'TLS'] : ['h2c']
  for (const transport of transports) {
    const skip = transport === 'TLS' ? skipWithout(certificate() !== null, 'openssl', NO_OPENSSL) : false
    const todo = options.todo?.[transport]
    test(`${name} (${transport})`, { timeout: options.timeoutMs ?? TEST_TIMEOUT_MS, skip, ...(todo ? { todo } : {}) }, (t) => fn(t, transport))
  }
}
