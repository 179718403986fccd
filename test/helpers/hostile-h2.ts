/**
 * HTTP/2 servers that attack the client, one behaviour each (the attack
 * classes of issue 43, as raw frames on 127.0.0.1, h2c or TLS with ALPN h2):
 * each answers a connection's preface with SETTINGS, like any server (so the
 * pre-run check passes), and misbehaves at the first request on it. It
 * records the GOAWAY codes the client sent on the connections it still
 * reads. Every flood is bounded: it stops when the client closes, after
 * FLOOD_CAP octets, or after FLOOD_MS.
 */
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { createServer as createTlsServer } from 'node:tls'
import { frame } from '../../src/engine/h2-frames.js'
import { longLiteral } from './h2-peer.js'

export type Attack =
  /** HEADERS without END_HEADERS, then CONTINUATION frames of 16 KiB, without end. */
  | 'continuation-flood'
  /** A 16 MB header list in 1,000 CONTINUATIONs, then END_HEADERS. */
  | 'header-list-16mb'
  /** A whole answer whose small block comes in HEADERS and nine CONTINUATIONs. */
  | 'nine-continuations'
  /** A 4 KB dynamic-table entry, then one-octet references to it (tens of MB decoded from 16 KB). */
  | 'hpack-bomb'
  /** Stops reading, then PING frames without end. */
  | 'ping-flood'
  /** Stops reading, then SETTINGS frames without end. */
  | 'settings-flood'
  /** A WINDOW_UPDATE on the connection that takes its window past 2^31-1. */
  | 'window-overflow'

export interface HostileServer {
  url: string
  /** GOAWAY error codes the client sent, in order. */
  goaways: number[]
  /** Requests (HEADERS from the client) seen. */
  requests: number
  close(): Promise<void>
}

const FLOOD_CAP = 512 * 1024 * 1024
const FLOOD_MS = 30_000
const FRAGMENT = 16_384

const SETTINGS = frame(4, 0, 0, Buffer.from([0, 3, 0, 0, 0, 100]))
const SETTINGS_ACK = frame(4, 1, 0, null)
/** ":status: 200" from the static table. */
const STATUS_200 = Buffer.from([0x88])
const PREFACE_LENGTH = 24

/** Writes `next()` frames while the client is there, bounded in octets and time. */
function flood(socket: Socket, next: () => Buffer): void {
  let sent = 0
  const until = Date.now() + FLOOD_MS
  const pump = (): void => {
    while (!socket.destroyed && sent < FLOOD_CAP && Date.now() < until) {
      const f = next()
      sent += f.length
      if (!socket.write(f)) return void socket.once('drain', pump)
    }
    socket.destroy()
  }
  pump()
}

function attack(kind: Attack, socket: Socket, stream: number): void {
  switch (kind) {
    case 'continuation-flood':
      socket.write(frame(1, 0, stream, STATUS_200))
      return flood(socket, () => frame(9, 0, stream, Buffer.alloc(FRAGMENT, 0x88)))
    case 'header-list-16mb': {
      socket.write(frame(1, 0, stream, STATUS_200))
      let n = 0
      return flood(socket, () => {
        if (++n > 1000) return Buffer.alloc(0)
        // Repeated ":status: 200" is a valid (if odd) field; the block is 16 MB of them.
        return frame(9, n === 1000 ? 4 : 0, stream, Buffer.alloc(FRAGMENT, 0x88))
      })
    }
    case 'nine-continuations': {
      // A whole answer (END_STREAM): ":status: 200", then one "cookie" field (static index 32) per CONTINUATION.
      const frames = [frame(1, 1, stream, STATUS_200)]
      for (let i = 1; i <= 9; i++) frames.push(frame(9, i === 9 ? 4 : 0, stream, Buffer.from([0x80 | 32])))
      return void socket.write(Buffer.concat(frames))
    }
    case 'hpack-bomb': {
      const entry = longLiteral('x', 4000, 0x40)
      const refs = Buffer.alloc(FRAGMENT - STATUS_200.length - entry.length, 0x80 | 62)
      return void socket.write(frame(1, 5, stream, Buffer.concat([STATUS_200, entry, refs])))
    }
    case 'ping-flood':
      socket.pause()
      return flood(socket, () => frame(6, 0, 0, Buffer.alloc(8, 7)))
    case 'settings-flood':
      socket.pause()
      return flood(socket, () => SETTINGS)
    case 'window-overflow':
      return void socket.write(frame(8, 0, 0, Buffer.from([0x7f, 0xff, 0xff, 0xff])))
  }
}

/** Reads the client's frames: GOAWAYs are recorded, the first HEADERS starts the attack. */
function serve(kind: Attack, socket: Socket, state: HostileServer): void {
  let buf = Buffer.alloc(0)
  let preface = false
  let attacked = false
  socket.on('error', () => {})
  socket.write(SETTINGS)
  socket.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk])
    if (!preface) {
      if (buf.length < PREFACE_LENGTH) return
      buf = buf.subarray(PREFACE_LENGTH)
      preface = true
    }
    while (buf.length >= 9) {
      const length = buf.readUIntBE(0, 3)
      if (buf.length < 9 + length) return
      const type = buf[3]!
      const flags = buf[4]!
      const stream = buf.readUInt32BE(5) & 0x7fffffff
      const payload = buf.subarray(9, 9 + length)
      buf = buf.subarray(9 + length)
      if (type === 4 && (flags & 1) === 0) socket.write(SETTINGS_ACK)
      if (type === 7 && payload.length >= 8) state.goaways.push(payload.readUInt32BE(4))
      if (type === 1) {
        state.requests++
        // A flood takes the connection over once; an answer goes to every request.
        if (!attacked || kind === 'nine-continuations') {
          attacked = true
          attack(kind, socket, stream)
        }
      }
    }
  })
}

/** A hostile server on 127.0.0.1; with `tls` (key and cert), over TLS with ALPN h2. */
export async function hostileServer(kind: Attack, tls?: { key: Buffer; cert: Buffer }): Promise<HostileServer> {
  const sockets = new Set<Socket>()
  const state: HostileServer = { url: '', goaways: [], requests: 0, close: async () => {} }
  const onSocket = (socket: Socket): void => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    serve(kind, socket, state)
  }
  const server: Server = tls ? createTlsServer({ ...tls, ALPNProtocols: ['h2'] }, onSocket) : createNetServer(onSocket)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  state.url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}/`
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy()
      server.close(() => resolve())
    })
  return state
}
