/**
 * A server that closes a kept-alive HTTP/1.1 connection as a request is
 * written to it (its idle timeout, a reload) never answers that request.
 * One that may be repeated (GET) is sent again on a new connection, as Go's
 * transport does: no error, its attempt counted once, the resend shown.
 * One that may not (a POST) fails as before. A raw server that reads the
 * second request on every connection and closes without a byte back: each
 * connection answers exactly one request.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { run } from '../src/run/run.js'
import { renderText } from '../src/report/text.js'

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

test('GET on a kept-alive connection the server closes unread: sent again, no error, counted once, shown', async (t) => {
  const s = await oneAnswerPerConnection()
  t.after(s.close)
  const result = await run({ urls: [s.url], concurrency: 1, requests: 10, warmup: 0, mode: 'plain' })
  const plain = result.phases.plain!
  assert.equal(plain.requests, 10)
  assert.equal(plain.errors, 0, JSON.stringify(plain.errorKinds))
  assert.equal(s.state.answered, 10)
  // Every request after the first met a connection closing under it, and went again on a new one.
  assert.equal(s.state.closedUnanswered, 9)
  assert.equal(plain.streamsResentAfterGoaway, 9)
  assert.equal(plain.attempts, 10, 'a resent request is one attempt')
  assert.equal(plain.connectionsOpened, 10, 'one connection per answer')
  assert.match(renderText(result), /Resent:\s+9 requests the server did not process \(.*a kept-alive HTTP\/1\.1 connection closed under them unread\), sent again/)
})

test('a POST on a kept-alive connection the server closes unread is not repeated: an error, as before', async (t) => {
  const s = await oneAnswerPerConnection()
  t.after(s.close)
  const result = await run({ urls: [s.url], concurrency: 1, requests: 10, warmup: 0, mode: 'plain', method: 'POST', body: Buffer.from('x') })
  const plain = result.phases.plain!
  assert.equal(plain.streamsResentAfterGoaway ?? 0, 0)
  assert.ok(plain.errors > 0)
  assert.equal(plain.errors + s.state.answered, 10)
  assert.equal(plain.attempts, s.state.answered + s.state.closedUnanswered, 'attempts = requests the server read')
})
