/**
 * hedgebench's own HTTP/1.1 connection (engine/h1-client.ts) and its
 * response parser: every framing a server may choose, split at every byte,
 * and the connection's life against real servers on 127.0.0.1: reuse,
 * `connection: close`, a server that closes an idle connection, a stopped
 * exchange, pause and resume, a refused connection, the bytes written.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer as createHttpServer } from 'node:http'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { buildConnector, type Dispatcher } from 'undici'
import { H1Client } from '../src/engine/h1-client.js'
import { ParseError, ResponseParser, type ResponseSink } from '../src/engine/h1-response-parser.js'
import { requestBytes } from '../src/engine/h1-request.js'

// ---------------------------------------------------------------- parser

interface Parsed {
  status: number
  headers: string[]
  body: string
  trailers: string[] | null
  ends: number
}

/** `want`: whether the sink asks for the raw header views (a load generator's caller does not). */
function sink(out: Parsed, want = true): ResponseSink {
  return {
    wantsHeaders: () => want,
    onResponseHeaders(status, raw) {
      out.status = status
      out.headers = raw.map((b) => b.toString('latin1'))
      return true
    },
    onResponseBody(chunk) {
      out.body += chunk.toString('latin1')
      return true
    },
    onResponseEnd(trailers) {
      out.trailers = trailers && trailers.map((b) => b.toString('latin1'))
      out.ends++
    },
  }
}

/** Parses `wire` fed in the given pieces; `finish` = the connection closed after the last one. */
function parse(pieces: Buffer[], opts: { head?: boolean; finish?: boolean; headers?: boolean } = {}): Parsed & { keepAlive: boolean } {
  const out: Parsed = { status: 0, headers: [], body: '', trailers: null, ends: 0 }
  const p = new ResponseParser(sink(out, opts.headers !== false))
  p.expect(opts.head === true)
  for (const piece of pieces) p.execute(piece)
  if (opts.finish) p.finish()
  return { ...out, keepAlive: p.keepAlive }
}

/** Every way of cutting `wire` in two (and in single bytes) parses the same as the whole. */
function splitsAgree(wire: string, opts: { head?: boolean; finish?: boolean; headers?: boolean } = {}): Parsed & { keepAlive: boolean } {
  const whole = Buffer.from(wire, 'latin1')
  const expected = parse([whole], opts)
  for (let i = 1; i < whole.length; i++) {
    assert.deepEqual(parse([whole.subarray(0, i), whole.subarray(i)], opts), expected, `split at byte ${i}`)
  }
  const bytes = Array.from({ length: whole.length }, (_, i) => whole.subarray(i, i + 1))
  assert.deepEqual(parse(bytes, opts), expected, 'one byte at a time')
  return expected
}

test('parser: content-length body, headers as raw name/value pairs, keep-alive by default', () => {
  const r = splitsAgree('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello')
  assert.equal(r.status, 200)
  assert.deepEqual(r.headers, ['Content-Type', 'text/plain', 'Content-Length', '5'])
  assert.equal(r.body, 'hello')
  assert.equal(r.ends, 1)
  assert.equal(r.keepAlive, true)
})

test('parser: a sink that wants no header views gets none, and the framing and reuse are read from the bytes all the same', () => {
  const wire = 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nconnection: Keep-Alive\r\nKeep-Alive: Timeout=7\r\n\r\nhello'
  const r = splitsAgree(wire, { headers: false })
  assert.deepEqual([r.status, r.headers, r.body, r.ends, r.keepAlive], [200, [], 'hello', 1, true])
  assert.deepEqual(splitsAgree(wire).headers, ['Content-Length', '5', 'connection', 'Keep-Alive', 'Keep-Alive', 'Timeout=7'])
  const closing = splitsAgree('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\nConnection: Close\r\n\r\n2\r\nok\r\n0\r\n\r\n', { headers: false })
  assert.deepEqual([closing.body, closing.keepAlive, closing.headers], ['ok', false, []])
  const out: Parsed = { status: 0, headers: [], body: '', trailers: null, ends: 0 }
  const p = new ResponseParser(sink(out, false))
  p.expect(false)
  p.execute(Buffer.from(wire))
  assert.equal(p.keepAliveHintMs, 7000)
})

test('parser: chunked body with extensions and trailers', () => {
  const r = splitsAgree('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Checksum: abc\r\n\r\n')
  assert.equal(r.body, 'hello, world')
  assert.deepEqual(r.trailers, ['X-Checksum', 'abc'])
  assert.equal(r.ends, 1)
})

test('parser: a body without length runs until the connection closes, and the connection is not reused', () => {
  const r = splitsAgree('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end', { finish: true })
  assert.equal(r.body, 'until the end')
  assert.equal(r.ends, 1)
  assert.equal(r.keepAlive, false)
  assert.equal(parse([Buffer.from('HTTP/1.1 200 OK\r\n\r\npartial')]).ends, 0, 'not ended before the close')
})

test('parser: 1xx answers are skipped; HEAD, 204 and 304 have no body', () => {
  const r = splitsAgree('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok')
  assert.equal(r.status, 201)
  assert.equal(r.body, 'ok')
  assert.equal(splitsAgree('HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n', { head: true }).ends, 1)
  assert.equal(splitsAgree('HTTP/1.1 204 No Content\r\n\r\n').ends, 1)
  assert.equal(splitsAgree('HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n').ends, 1)
})

test('parser: connection close, HTTP/1.0 and the Keep-Alive hint decide reuse', () => {
  assert.equal(splitsAgree('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n').keepAlive, false)
  assert.equal(splitsAgree('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n').keepAlive, false)
  assert.equal(splitsAgree('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n').keepAlive, true)
  const out: Parsed = { status: 0, headers: [], body: '', trailers: null, ends: 0 }
  const p = new ResponseParser(sink(out))
  p.expect(false)
  p.execute(Buffer.from('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: 0\r\n\r\n'))
  assert.equal(p.keepAliveHintMs, 5000)
})

test('parser: malformed answers and bytes nobody asked for are errors', () => {
  const bad = [
    'HTTP/1.1 2000 OK\r\n\r\n',
    'SMTP ready\r\n\r\n',
    'HTTP/1.1 200 OK\r\nno colon here\r\n\r\n',
    'HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n',
    'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX',
    'HTTP/1.1 101 Switching Protocols\r\n\r\n',
    'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA',
  ]
  for (const wire of bad) assert.throws(() => parse([Buffer.from(wire)]), ParseError, JSON.stringify(wire))
  const idle = new ResponseParser(sink({ status: 0, headers: [], body: '', trailers: null, ends: 0 }))
  assert.throws(() => idle.execute(Buffer.from('HTTP/1.1 200 OK\r\n\r\n')), ParseError, 'no request in flight')
  assert.throws(() => parse([Buffer.from('HTTP/1.1 200 OK\r\nX: ' + 'a'.repeat(20_000))]), ParseError, 'header block over the limit')
})

// ---------------------------------------------------------------- request bytes

test('request bytes: what undici writes (host, connection, headers, content-length), built once per options object', () => {
  const get: Dispatcher.DispatchOptions = { origin: 'http://127.0.0.1:8080', path: '/a?b=1', method: 'GET', headers: ['x-one', '1', 'Host', 'example.test'] }
  const wire = requestBytes(get, '127.0.0.1:8080')
  assert.equal(wire.bytes.toString(), 'GET /a?b=1 HTTP/1.1\r\nhost: example.test\r\nconnection: keep-alive\r\nx-one: 1\r\n\r\n')
  assert.equal(requestBytes(get, '127.0.0.1:8080'), wire, 'the same object for the same options')
  const post = requestBytes({ origin: 'http://h', path: '/', method: 'POST', body: Buffer.from('{}'), reset: true, headers: ['content-length', '99'] }, 'h')
  assert.equal(post.bytes.toString(), 'POST / HTTP/1.1\r\nhost: h\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}')
  assert.equal(post.close, true)
  assert.match(requestBytes({ origin: 'http://h', path: '/', method: 'PUT' }, 'h').bytes.toString(), /content-length: 0\r\n/)
  assert.throws(() => requestBytes({ origin: 'http://h', path: '/', method: 'GET', headers: ['x', 'a\r\nInjected: 1'] }, 'h'), /invalid x header/)
  assert.throws(() => requestBytes({ origin: 'http://h', path: '/', method: 'GET', headers: ['transfer-encoding', 'chunked'] }, 'h'), /invalid transfer-encoding/)
})

// ---------------------------------------------------------------- the connection

interface Answer {
  status: number | null
  body: string
  error: Error | null
}

function handler(onDone: (a: Answer) => void, hooks: { onConnect?: (abort: (e?: Error) => void) => void; onHeaders?: () => void; onData?: (chunk: Buffer, resume: () => void) => boolean } = {}): Dispatcher.DispatchHandler {
  const a: Answer = { status: null, body: '', error: null }
  let resume: () => void = () => {}
  return {
    onConnect(abort: (e?: Error) => void) {
      hooks.onConnect?.(abort)
    },
    onHeaders(status: number, _raw: Buffer[], r: () => void) {
      a.status = status
      resume = r
      hooks.onHeaders?.()
      return true
    },
    onData(chunk: Buffer) {
      a.body += chunk.toString()
      return hooks.onData ? hooks.onData(chunk, resume) : true
    },
    onComplete() {
      onDone(a)
    },
    onError(error: Error) {
      a.error = error
      onDone(a)
    },
  } as unknown as Dispatcher.DispatchHandler
}

function send(client: H1Client, path = '/', hooks?: Parameters<typeof handler>[1]): Promise<Answer> {
  return new Promise((resolve) => client.dispatch({ origin: 'http://x', path, method: 'GET' }, handler(resolve, hooks)))
}

/** Closed after the file's tests whatever happened in them, so a failed assertion fails the file instead of leaving it running. */
const cleanup: Array<() => void> = []
after(() => {
  for (const f of cleanup) f()
})

function client(origin: string, keepAliveTimeout = 10_000): H1Client {
  const c = new H1Client(origin, { connect: buildConnector({ timeout: 2000 }), keepAliveTimeout, keepAliveMaxTimeout: 60_000 })
  cleanup.push(() => void c.destroy())
  return c
}

/** A raw TCP server: `answer` writes whatever it likes for each request head it reads. */
async function rawServer(answer: (socket: Socket, head: string, n: number) => void): Promise<{ origin: string; accepted: number; closed: number; heads: string[]; server: Server }> {
  const state = { origin: '', accepted: 0, closed: 0, heads: [] as string[], server: null as unknown as Server }
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    state.accepted++
    // Closed on both sides: the client has read the server's FIN (its socket ends its side when it does).
    socket.on('close', () => state.closed++)
    let buf = ''
    socket.on('data', (d) => {
      buf += d.toString('latin1')
      let end
      while ((end = buf.indexOf('\r\n\r\n')) >= 0) {
        const head = buf.slice(0, end)
        buf = buf.slice(end + 4)
        state.heads.push(head)
        answer(socket, head, state.heads.length)
      }
    })
    socket.on('error', () => {})
  })
  cleanup.push(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  state.server = server
  return state
}

test('client: sequential requests reuse one connection; the server sees each exactly once', async () => {
  const srv = await rawServer((s, _h, n) => s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${String(n).length}\r\n\r\n${n}`))
  const c = client(srv.origin)
  let connects = 0
  c.on('connect', () => connects++)
  for (let i = 1; i <= 50; i++) assert.deepEqual(await send(c), { status: 200, body: String(i), error: null })
  assert.equal(srv.accepted, 1)
  assert.equal(connects, 1)
  assert.equal(srv.heads.length, 50)
  assert.match(srv.heads[0]!, /^GET \/ HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\nconnection: keep-alive$/)
  await c.close()
  srv.server.close()
})

test('client: connection: close from the server, and a server that closes an idle connection, cost a new connection, never an error', async () => {
  const srv = await rawServer((s, _h, n) => {
    if (n % 2 === 1) s.end('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok')
    else {
      s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
      setTimeout(() => s.end(), 5) // closes it while idle, without a hint
    }
  })
  const c = client(srv.origin)
  for (let i = 0; i < 6; i++) {
    assert.deepEqual(await send(c), { status: 200, body: 'ok', error: null })
    // The next request goes once the client has seen this close (bounded): a loaded machine can otherwise run the
    // client's next send before the FIN it already received is read, a race no client wins (the server's, not its).
    for (let waited = 0; srv.closed <= i && waited < 2000; waited += 5) await new Promise((r) => setTimeout(r, 5))
  }
  assert.equal(srv.accepted, 6)
  await c.close()
  srv.server.close()
})

test('client: a connection idle past the server\'s Keep-Alive hint is replaced before it is used', async () => {
  const srv = createHttpServer((_req, res) => res.end('ok'))
  srv.keepAliveTimeout = 1000 // Node says "Keep-Alive: timeout=1": reuse for at most 0 s
  let accepted = 0
  srv.on('connection', () => accepted++)
  cleanup.push(() => {
    srv.closeAllConnections()
    srv.close()
  })
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  const c = client(`http://127.0.0.1:${(srv.address() as AddressInfo).port}`)
  assert.equal((await send(c)).status, 200)
  await new Promise((r) => setTimeout(r, 20))
  assert.equal((await send(c)).status, 200)
  assert.equal(accepted, 2, 'the second request went on a new connection')
  await c.close()
  srv.close()
})

test('client: a stopped exchange fails with the reason and closes its connection; the next one reconnects', async () => {
  const srv = await rawServer((s, head) => {
    if (head.startsWith('GET /slow')) s.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\npart') // never finishes
    else s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
  })
  const c = client(srv.origin)
  let disconnects = 0
  c.on('disconnect', () => disconnects++)
  const reason = new Error('lost the race')
  const stopped = await send(c, '/slow', {
    onData: (chunk) => {
      queueMicrotask(() => abortIt(reason))
      return chunk.length > 0
    },
    onConnect: (abort) => {
      abortIt = abort
    },
  })
  assert.equal(stopped.error, reason)
  assert.equal(stopped.body, 'part')
  await new Promise((r) => setTimeout(r, 20))
  assert.equal(disconnects, 1, 'the connection was closed to stop the response')
  assert.deepEqual(await send(c, '/fast'), { status: 200, body: 'ok', error: null })
  assert.equal(srv.accepted, 2)
  await c.close()
  srv.server.close()
})
let abortIt: (e?: Error) => void = () => {}

test('client: stopped on its headers (a loser decided as its answer arrives), the rest of that answer is ignored', async () => {
  const srv = await rawServer((s) => s.write('HTTP/1.1 503 Busy\r\nContent-Length: 4\r\n\r\nbusy'))
  const c = client(srv.origin)
  let abort: (e?: Error) => void = () => {}
  const r = await send(c, '/', { onConnect: (a) => (abort = a), onHeaders: () => abort(new Error('decided elsewhere')) })
  assert.deepEqual([r.status, r.body, String(r.error)], [503, '', 'Error: decided elsewhere'])
  assert.deepEqual(await send(c), { status: 503, body: 'busy', error: null })
  assert.equal(srv.accepted, 2, 'the stopped answer took its connection with it')
})

test('client: stopped in onConnect, the request is never written', async () => {
  const srv = await rawServer((s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'))
  const c = client(srv.origin)
  assert.equal((await send(c)).status, 200)
  const r = await send(c, '/never', { onConnect: (abort) => abort(new Error('cancelled before it was sent')) })
  assert.match(String(r.error), /cancelled before it was sent/)
  assert.equal((await send(c)).status, 200)
  assert.deepEqual(srv.heads.map((h) => h.split(' ')[1]), ['/', '/'])
  await c.close()
  srv.server.close()
})

test('client: a cut-off answer fails with undici\'s SocketError; a refused connection with ECONNREFUSED', async () => {
  const srv = await rawServer((s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort'))
  const c = client(srv.origin)
  const r = await send(c)
  assert.equal((r.error as { code?: string }).code, 'UND_ERR_SOCKET')
  await c.close()
  const port = (srv.server.address() as AddressInfo).port
  await new Promise((r) => srv.server.close(r))
  const refused = await send(client(`http://127.0.0.1:${port}`))
  assert.equal((refused.error as { code?: string }).code, 'ECONNREFUSED')
})

test('client: returning false from onData pauses reading until resume()', async () => {
  const srv = await rawServer((s) => {
    s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n')
    setTimeout(() => s.write('3\r\ndef\r\n0\r\n\r\n'), 20)
  })
  const c = client(srv.origin)
  let paused = 0
  const r = await send(c, '/', {
    onData: (_chunk, resume) => {
      if (paused++ > 0) return true
      setTimeout(resume, 60)
      return false
    },
  })
  assert.deepEqual(r, { status: 200, body: 'abcdef', error: null })
  await c.close()
  srv.server.close()
})

test('client: destroy() fails what is in flight and queued; dispatch after close is refused', async () => {
  const srv = await rawServer(() => {}) // never answers
  const c = client(srv.origin)
  const inFlight = send(c)
  const queued = send(c)
  await new Promise((r) => setTimeout(r, 30))
  await c.destroy()
  assert.equal(((await inFlight).error as { code?: string }).code, 'UND_ERR_DESTROYED')
  assert.equal(((await queued).error as { code?: string }).code, 'UND_ERR_DESTROYED')
  assert.equal(((await send(c)).error as { code?: string }).code, 'UND_ERR_DESTROYED')
  srv.server.close()
})
