/**
 * Seeded fuzzing of hedgebench's HTTP/2 client (engine/h2-client.ts,
 * h2-frames.ts, hpack.ts) as a misbehaving server would drive it: over a
 * real socket on 127.0.0.1, a server answers each case with a valid
 * response script that has been mutated (bytes flipped, cut short, random
 * frames of any type, flags, length and stream inserted), then closes. Every
 * request must end exactly once (an answer or an error that has a code),
 * nothing may be thrown out of a socket event, and the client must still
 * close. Bounded: CASES connections, each ended by the server's close.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { buildConnector, type Dispatcher } from 'undici'
import { H2Client } from '../src/engine/h2-client.js'
import { seededRandom } from '../src/core/random.js'
import { huffmanEncode } from '../src/engine/hpack.js'

const CASES = 150
type Rand = () => number
const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1))

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9)
  head.writeUIntBE(payload.length, 0, 3)
  head[3] = type
  head[4] = flags
  head.writeUInt32BE(stream, 5)
  return Buffer.concat([head, payload])
}

/** A well-formed answer to streams 1 and 3: SETTINGS, then per stream HEADERS (indexed, literal, Huffman, dynamic), DATA, trailers. */
function validScript(r: Rand): Buffer[] {
  const settings = Buffer.alloc(12)
  settings.writeUInt16BE(3, 0)
  settings.writeUInt32BE(100, 2)
  settings.writeUInt16BE(4, 6)
  settings.writeUInt32BE(65535, 8)
  const date = huffmanEncode(Buffer.from('Mon, 21 Oct 2013 20:13:21 GMT'))
  // :status 200 (indexed), date with incremental indexing and a Huffman value, then a literal name.
  const block1 = Buffer.concat([Buffer.from([0x88, 0x61, 0x80 | date.length]), date, Buffer.from([0x00, 0x01, 0x78, 0x01, 0x79])])
  // The second answer refers to the dynamic table entry the first one added (index 62).
  const block3 = Buffer.from([0x88, 0xbe])
  const frames = [frame(4, 0, 0, settings), frame(6, 0, 0, Buffer.alloc(8, int(r, 0, 255)))]
  frames.push(frame(1, 0x4, 1, block1), frame(0, 0, 1, Buffer.from('hello')), frame(1, 0x5, 1, Buffer.from([0x40, 0x01, 0x74, 0x01, 0x31])))
  frames.push(frame(1, 0x4, 3, block3), frame(0, 0x1, 3, Buffer.from('world')))
  frames.push(frame(7, 0, 0, Buffer.from([0, 0, 0, 3, 0, 0, 0, 0])))
  return frames
}

function mutate(r: Rand, frames: Buffer[]): Buffer {
  const out: Buffer[] = frames.map((f) => Buffer.from(f))
  for (let k = int(r, 1, 4); k > 0; k--) {
    const op = int(r, 0, 3)
    if (op === 0) {
      // Flip a byte somewhere.
      const f = out[int(r, 0, out.length - 1)]!
      if (f.length > 0) f[int(r, 0, f.length - 1)] = int(r, 0, 255)
    } else if (op === 1) {
      // A random frame: any type, flags, stream and a short random payload.
      const payload = Buffer.from(Array.from({ length: int(r, 0, 16) }, () => int(r, 0, 255)))
      out.splice(int(r, 0, out.length), 0, frame(int(r, 0, 12), int(r, 0, 255), int(r, 0, 7), payload))
    } else if (op === 2) {
      // Drop a frame.
      if (out.length > 1) out.splice(int(r, 0, out.length - 1), 1)
    } else {
      // Cut the script short.
      const all = Buffer.concat(out)
      return all.subarray(0, int(r, 0, all.length))
    }
  }
  return Buffer.concat(out)
}

test('h2 frame fuzz: every request ends exactly once, with an answer or a coded error, and nothing is thrown', async (t) => {
  const r = seededRandom(2811)
  let script: Buffer = Buffer.alloc(0)
  const server = createServer((socket: Socket) => {
    socket.on('error', () => {})
    const bytes = script
    // After the client's preface and first requests have arrived, the script, then the end of the connection.
    socket.once('data', () => {
      socket.write(bytes)
      setTimeout(() => socket.destroy(), 5)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const thrown: unknown[] = []
  const onUncaught = (err: unknown): void => {
    thrown.push(err)
  }
  process.on('uncaughtException', onUncaught)
  t.after(() => process.off('uncaughtException', onUncaught))
  const connect = buildConnector({})
  const outcomes = { answered: 0, failed: 0 }
  for (let i = 0; i < CASES; i++) {
    script = i === 0 ? Buffer.concat(validScript(r)) : mutate(r, validScript(r))
    const client = new H2Client(origin, { connect, maxStreams: 100 })
    const ends = await Promise.all([request(client, origin), request(client, origin)])
    for (const e of ends) {
      if (e.error === null) outcomes.answered++
      else {
        outcomes.failed++
        assert.equal(typeof (e.error as { code?: unknown }).code, 'string', `case ${i}: an error without a code: ${e.error.stack}`)
      }
      assert.equal(e.ends, 1, `case ${i}: a request ended ${e.ends} times`)
    }
    if (i === 0)
      assert.deepEqual(
        ends.map((e) => [e.status, e.body]),
        [
          [200, 'hello'],
          [200, 'world'],
        ],
        'the valid script is read as sent',
      )
    await client.close()
  }
  assert.deepEqual(thrown, [])
  t.diagnostic(JSON.stringify(outcomes))
  assert.ok(outcomes.answered > 0 && outcomes.failed > 0, JSON.stringify(outcomes))
})

interface End {
  ends: number
  status: number
  body: string
  error: Error | null
}

/** One GET through the client; resolves at its first end, and counts any later one for a short while. */
function request(client: H2Client, origin: string): Promise<End> {
  return new Promise((resolve) => {
    const end: End = { ends: 0, status: 0, body: '', error: null }
    const finish = (): void => {
      if (++end.ends === 1) setTimeout(() => resolve(end), 10) // a second end, if any, would land meanwhile
    }
    const handler = {
      onConnect: () => {},
      onHeaders: (status: number) => {
        end.status = status
        return true
      },
      onData: (chunk: Buffer) => {
        end.body += chunk.toString()
        return true
      },
      onComplete: () => finish(),
      onError: (err: Error) => {
        end.error = err
        finish()
      },
    }
    client.dispatch({ origin, path: '/', method: 'GET' } as Dispatcher.DispatchOptions, handler as unknown as Dispatcher.DispatchHandler)
  })
}
