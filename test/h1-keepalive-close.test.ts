/**
 * A raw server that reads the second request on every connection and closes
 * without a byte back (each connection answers exactly one request): the
 * request it read is an attempt and an error, never sent again, whatever its
 * method, so the client's attempts equal the requests the server read.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { run } from '../src/run/run.js'

async function oneAnswerPerConnection() {
  const state = { answered: 0, closedUnanswered: 0 }
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let buffered = ''
    let requests = 0
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1')
      for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
        const head = buffered.slice(0, end)
        // The run's pre-flight probe (an invalid Content-Length) is refused, as RFC 9112 says, and not counted.
        if (/content-length: *[^\d\s]/i.test(head)) {
          socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n')
          return
        }
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0)
        if (buffered.length < end + 4 + length) return
        buffered = buffered.slice(end + 4 + length)
        if (++requests > 1) {
          state.closedUnanswered++
          socket.destroy()
          return
        }
        state.answered++
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok')
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy()
      server.close(() => resolve())
    })
  return { state, url, close }
}

test('a server that reads a request and closes without a byte back: an error, and an attempt it saw, never sent twice', async (t) => {
  // From the client this is also what a kept-alive connection closed as the request was written looks like;
  // resending would count twice every request a server read before it closed or crashed.
  for (const method of ['GET', 'POST'] as const) {
    const s = await oneAnswerPerConnection()
    t.after(s.close)
    const result = await run({
      urls: [s.url],
      concurrency: 1,
      requests: 10,
      warmup: 0,
      mode: 'plain',
      method,
      ...(method === 'POST' ? { body: Buffer.from('x') } : {}),
    })
    const plain = result.phases.plain!
    assert.equal(plain.streamsResentAfterGoaway ?? 0, 0, method)
    assert.ok(plain.errors > 0, method)
    assert.equal(plain.errors + s.state.answered, 10, method)
    assert.equal(plain.attempts, s.state.answered + s.state.closedUnanswered, `${method}: attempts = requests the server read`)
  }
})
