/**
 * An h2c server that rotates its connection with a graceful GOAWAY (code 0,
 * as servers with a connection-age limit do): undici 7 fails the streams
 * still in flight on that session (README, HTTP/2). hedgebench names those
 * failures HTTP2_GOAWAY, so the report says what happened instead of a
 * generic UND_ERR_SOCKET, and the next attempts open a new session.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { run } from '../src/run/run.js'

test('a graceful GOAWAY: streams undici fails on it are named HTTP2_GOAWAY; the run goes on on a new session', async (t) => {
  let received = 0
  const server = createServer((req, res) => {
    const n = ++received
    req.resume()
    // Every 10th stream: the server says it will take no more on this session, after this one (graceful).
    if (n % 10 === 0) req.stream.session!.goaway(0, req.stream.id)
    setTimeout(() => res.end('ok'), 5)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  const plain = (await run({ urls: [url], http2: true, concurrency: 4, requests: 60, warmup: 0, mode: 'plain' })).phases.plain!
  assert.equal(plain.requests, 60)
  assert.ok(plain.ok >= 30, `most answered: ${plain.ok}`)
  assert.equal(plain.errorKinds.UND_ERR_SOCKET, undefined, JSON.stringify(plain.errorKinds))
  // The stream that brought the GOAWAY is still in flight (answered 5 ms later) when undici drops the session: at least one per GOAWAY.
  assert.ok((plain.errorKinds.HTTP2_GOAWAY ?? 0) >= 1, JSON.stringify(plain.errorKinds))
  assert.equal(plain.errors, plain.errorKinds.HTTP2_GOAWAY, JSON.stringify(plain.errorKinds))
})
