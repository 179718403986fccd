/**
 * H2Client keeps a response header block that left the HPACK dynamic table
 * unchanged and does not decode the same octets again (hpack.ts
 * BlockCache). The same octets mean other fields once the table has
 * changed: a server that answers four requests, one after the other, with
 * "x-v: one" added to its table, then an index to it, then "x-v: two"
 * added (the index now points at it), then the very same index octets
 * again. Every answer must carry the field the table held at that moment.
 * A raw socket server (FrameReader from the client's own frames module) so
 * that the octets are exactly these.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { buildConnector, type Dispatcher } from 'undici'
import { H2Client } from '../src/engine/h2-client.js'
import { CLIENT_PREFACE, FrameReader, FrameType, frame, settingsFrame } from '../src/engine/h2-frames.js'

const END_STREAM_AND_HEADERS = 0x5
/** Literal with incremental indexing, new name (RFC 7541 6.2.1). */
const insert = (name: string, value: string): Buffer =>
  Buffer.concat([Buffer.from([0x40, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)])
/** :status 200 (static 8), then 62: the newest entry of the dynamic table. */
const STATUS_AND_NEWEST = Buffer.from([0x88, 0xbe])

/** The block the server answers its n-th stream with. */
const BLOCKS = [
  Buffer.concat([Buffer.from([0x88]), insert('x-v', 'one')]),
  STATUS_AND_NEWEST,
  Buffer.concat([Buffer.from([0x88]), insert('x-v', 'two')]),
  STATUS_AND_NEWEST,
]

test('the same header block octets after a change of the dynamic table are decoded against the new table', async (t) => {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
    let answered = 0
    let preface = Buffer.alloc(0)
    const reader = new FrameReader({
      onFrame(type, _flags, id) {
        if (type !== FrameType.HEADERS) return
        const block = BLOCKS[answered++]
        if (block !== undefined) socket.write(frame(FrameType.HEADERS, END_STREAM_AND_HEADERS, id, block))
      },
    })
    socket.write(settingsFrame([]))
    // The client's preface first (it may come in pieces), then its frames.
    socket.on('data', (chunk: Buffer) => {
      if (preface.length >= CLIENT_PREFACE.length) return reader.execute(chunk)
      preface = Buffer.concat([preface, chunk])
      if (preface.length > CLIENT_PREFACE.length) reader.execute(preface.subarray(CLIENT_PREFACE.length))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const client = new H2Client(origin, { connect: buildConnector({}), maxStreams: 10 })
  t.after(async () => {
    await client.destroy()
    for (const s of sockets) s.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const opts = { origin, path: '/', method: 'GET' } as Dispatcher.DispatchOptions
  const heard: string[] = []
  for (let i = 0; i < BLOCKS.length; i++) {
    await new Promise<void>((resolve, reject) => {
      let line = ''
      client.dispatch(opts, {
        onConnect: () => {},
        onHeaders: (status: number, raw: Buffer[]) => {
          const fields: string[] = []
          for (let k = 0; k < raw.length; k += 2) fields.push(`${raw[k]!.toString()}=${raw[k + 1]!.toString()}`)
          line = `${status} ${fields.join(' ')}`
          return true
        },
        onData: () => true,
        onComplete: () => {
          heard.push(line)
          resolve()
        },
        onError: reject,
      } as unknown as Dispatcher.DispatchHandler)
    })
  }
  assert.deepEqual(heard, ['200 x-v=one', '200 x-v=one', '200 x-v=two', '200 x-v=two'])
})
