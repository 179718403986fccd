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
import { MAX_HEADER_BYTES, ParseError, ResponseParser, type ResponseSink } from '../src/engine/h1-response-parser.js'
import { requestBytes } from '../src/engine/h1-request.js'
import { parseResult, renderJson, renderText, run, type RequestRecord } from '../src/index.js'

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
  // Copies, as each socket read is a Buffer of its own (the parser unfolds obs-fold in place).
  for (const piece of pieces) p.execute(Buffer.from(piece))
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

/** The reason a parse fails with, or null if it does not. */
function failure(pieces: Buffer[], opts: { head?: boolean } = {}): string | null {
  try {
    parse(pieces, opts)
    return null
  } catch (err) {
    assert.ok(err instanceof ParseError, String(err))
    return err.reason
  }
}

/** `wire` cut into reads of `size` bytes. */
function segments(wire: string, size: number): Buffer[] {
  const whole = Buffer.from(wire, 'latin1')
  const out: Buffer[] = []
  for (let i = 0; i < whole.length; i += size) out.push(whole.subarray(i, i + size))
  return out
}

test("parser: the header limit is the whole block's, however its bytes arrive", () => {
  const block = (bytes: number): string => {
    const head = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Pad: '
    return head + 'a'.repeat(bytes - head.length - 4) + '\r\n\r\nok'
  }
  const big = block(60_000)
  assert.equal(failure([Buffer.from(big)]), 'header block too large', '60 KB in one read')
  assert.equal(failure(segments(big, 8192)), 'header block too large', '60 KB in 8 KiB reads')
  const twenty = Buffer.from(block(20_000))
  assert.equal(failure([twenty.subarray(0, 1000), twenty.subarray(1000)]), 'header block too large', '20 KB as 1,000 + 19,000')
  const limit = block(MAX_HEADER_BYTES)
  for (const size of [MAX_HEADER_BYTES + 2, 8192, 1000, 333])
    assert.equal(parse(segments(limit, size)).body, 'ok', `${MAX_HEADER_BYTES} bytes in ${size}-byte reads`)
  const over = block(MAX_HEADER_BYTES + 1)
  for (const size of [MAX_HEADER_BYTES + 2, 8192, 1000, 333])
    assert.equal(failure(segments(over, size)), 'header block too large', `one byte over, in ${size}-byte reads`)
})

test('parser: the trailer section is bounded as the header block is, however its lines arrive', () => {
  const start = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n'
  const line = `X-Trailer: ${'t'.repeat(1000)}\r\n`
  // Endless trailer lines, one per read: it fails once the section passes the limit, not when memory runs out.
  const out: Parsed = { status: 0, headers: [], body: '', trailers: null, ends: 0 }
  const p = new ResponseParser(sink(out))
  p.expect(false)
  p.execute(Buffer.from(start))
  let fed = 0
  let reason: string | null = null
  for (let i = 0; i < 1000 && reason === null; i++) {
    try {
      p.execute(Buffer.from(line))
      fed += line.length
    } catch (err) {
      reason = (err as ParseError).reason
    }
  }
  assert.equal(reason, 'trailer section too large')
  assert.ok(fed <= MAX_HEADER_BYTES, `failed within the limit (${fed} bytes of trailers taken)`)
  assert.equal(out.ends, 0)
  const many = start + line.repeat(30) + '\r\n'
  assert.equal(failure([Buffer.from(many)]), 'trailer section too large', 'in one read')
  assert.equal(failure(segments(many, 700)), 'trailer section too large', 'in 700-byte reads')
  assert.equal(failure([Buffer.from(start + 'X: ' + 'y'.repeat(MAX_HEADER_BYTES + 10))]), 'trailer section too large', 'one line that never ends')
  assert.deepEqual(parse(segments(start + line.repeat(10) + '\r\n', 500)).trailers!.length, 20, 'ten 1 KB trailers are within it')
})

test('parser: bare LF line ends are accepted (RFC 9112 2.2), mixed with CRLF or alone', () => {
  for (const wire of [
    'HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: 5\n\nhello',
    'HTTP/1.1 200 OK\r\nContent-Type: text/plain\nContent-Length: 5\r\n\nhello',
    'HTTP/1.1 200 OK\nContent-Type: text/plain\r\nContent-Length: 5\n\r\nhello',
  ]) {
    const r = splitsAgree(wire)
    assert.deepEqual([r.status, r.headers, r.body, r.ends], [200, ['Content-Type', 'text/plain', 'Content-Length', '5'], 'hello', 1], JSON.stringify(wire))
  }
  assert.equal(splitsAgree('HTTP/1.1 204 No Content\n\n').ends, 1)
})

test('parser: framing errors are named at once, before the rest of the answer arrives', () => {
  // Each header block is complete; the body never comes: the reason is given on these bytes alone.
  assert.equal(failure([Buffer.from('HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\n')]), 'whitespace before a header colon')
  assert.equal(failure([Buffer.from('HTTP/1.1 200 OK\r\nContent-Length\t: 5\r\n\r\n')]), 'whitespace before a header colon')
  assert.equal(failure([Buffer.from('HTTP/1.1 200 OK\r\nno colon here\r\n\r\n')]), 'malformed header line')
  assert.equal(failure([Buffer.from('HTTP/1.1 200 OK\r\n Leading: space\r\n\r\n')]), 'malformed header line')
  // HTTP/0.9 (a body with no status line) and other protocols: on their first bytes, with no line end in sight.
  for (const wire of ['hello world', '<html>', 'SSH-2.0-OpenSSH_9.6', 'HTTP/2.0 200', 'h'])
    assert.equal(failure([Buffer.from(wire)]), 'malformed status line', wire)
  for (const wire of ['H', 'HTTP/', 'HTTP/1.1 200 OK\r\nContent-Len']) assert.equal(failure([Buffer.from(wire)]), null, `${wire}: may still be an answer`)
})

test('parser: obs-fold is unfolded into spaces (RFC 9112 5.2), in the header block and the trailers', () => {
  const r = splitsAgree('HTTP/1.1 200 OK\r\nX-Long: first\r\n  second\r\n\tthird\r\nContent-Length:\r\n 2\r\n\r\nok')
  assert.equal(r.headers[0], 'X-Long')
  assert.equal(r.headers[1], 'first    second   third')
  assert.deepEqual([r.headers[2], r.headers[3], r.body], ['Content-Length', '2', 'ok'])
  const bare = splitsAgree('HTTP/1.1 200 OK\nX-Long: a\n b\nContent-Length: 2\n\nok')
  assert.match(bare.headers[1]!, /^a +b$/)
  const last = splitsAgree('HTTP/1.1 200 OK\nContent-Length: 2\nX-Last: a\n \n\nok')
  assert.deepEqual([last.headers[3], last.body], ['a', 'ok'], 'a fold of nothing just before the end of the block')
  const t = splitsAgree('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: one\r\n two\r\n\r\n')
  assert.deepEqual(t.trailers, ['X-T', 'one two'])
})

test('parser: chunk sizes with leading zeros are accepted; anything but hex digits and extensions is not', () => {
  const r = splitsAgree('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n000000000005\r\nhello\r\n0005 ;ext=1\r\nworld\r\n00000000000\r\n\r\n')
  assert.deepEqual([r.body, r.ends], ['helloworld', 1])
  for (const size of ['5x', '-5', '+5', ' 5', '', '0x5', '20000000000000']) {
    assert.equal(
      failure([Buffer.from(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${size}\r\nhello\r\n0\r\n\r\n`)]),
      'malformed chunk size',
      JSON.stringify(size),
    )
  }
})

test('parser: Transfer-Encoding is chunked only when chunked is its final coding; with Content-Length, the connection is not reused', () => {
  const both = splitsAgree('HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n')
  assert.deepEqual([both.body, both.ends, both.keepAlive], ['ok', 1, false])
  const gzip = splitsAgree('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nokmore', { finish: true })
  assert.deepEqual([gzip.body, gzip.ends, gzip.keepAlive], ['okmore', 1, false], 'a final coding other than chunked is read to the close')
  assert.equal(parse([Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nok')]).ends, 0, 'not ended by the Content-Length')
  const x = splitsAgree('HTTP/1.1 200 OK\r\nTransfer-Encoding: xchunked\r\n\r\n2\r\nok\r\n0\r\n\r\n', { finish: true })
  assert.deepEqual([x.body, x.keepAlive], ['2\r\nok\r\n0\r\n\r\n', false], 'xchunked is not chunked')
  assert.equal(splitsAgree('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip ,\tCHUNKED\r\n\r\n2\r\nok\r\n0\r\n\r\n').body, 'ok')
  assert.equal(
    splitsAgree('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\nraw', { finish: true }).body,
    'raw',
    "the last field's final coding decides",
  )
  assert.equal(splitsAgree('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n').keepAlive, true)
})

test('parser: a control character in a header value (NUL, CR alone, ESC, DEL) is an error; HTAB and obs-text are not', () => {
  for (const c of ['\0', '\r', '\x1b', '\x7f', '\x01']) {
    assert.equal(
      failure([Buffer.from(`HTTP/1.1 200 OK\r\nX: a${c}b\r\nContent-Length: 0\r\n\r\n`, 'latin1')]),
      'control character in a header',
      JSON.stringify(c),
    )
  }
  assert.equal(
    failure([Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: a\0b\r\n\r\n')]),
    'control character in a header',
    'in a trailer',
  )
  const r = splitsAgree('HTTP/1.1 200 OK\r\nX: a\tb \xe9\r\nContent-Length: 0\r\n\r\n')
  assert.equal(r.headers[1], 'a\tb \xe9')
})

test('parser: bytes after an answer without a body (HEAD, 204, 304) are never read as the next answer', () => {
  // A 204 that announces a body (Content-Length, or a transfer coding) may send it: the connection is not reused.
  assert.equal(splitsAgree('HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n').keepAlive, false)
  assert.equal(splitsAgree('HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n').keepAlive, false)
  assert.equal(splitsAgree('HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n').keepAlive, true)
  assert.equal(splitsAgree('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n', { head: true }).keepAlive, true, "a HEAD answer's length is the GET's")
  // Whatever arrives after one, in the same read or a later one, is named for it, not for the next answer.
  assert.equal(failure([Buffer.from('HTTP/1.1 204 No Content\r\n\r\nhello')]), 'data after a response without a body')
  const out: Parsed = { status: 0, headers: [], body: '', trailers: null, ends: 0 }
  const p = new ResponseParser(sink(out))
  p.expect(true)
  p.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n'))
  p.expect(false)
  assert.throws(
    () => p.execute(Buffer.from('hello')),
    (e: ParseError) => e.reason === 'data after a response without a body',
  )
  p.reset()
  p.expect(false)
  assert.throws(
    () => p.execute(Buffer.from('hello')),
    (e: ParseError) => e.reason === 'malformed status line',
    'on a new connection, the bytes are just not an answer',
  )
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
  assert.throws(
    () => requestBytes({ origin: 'http://h', path: '/', method: 'GET', headers: ['transfer-encoding', 'chunked'] }, 'h'),
    /invalid transfer-encoding/,
  )
})

// ---------------------------------------------------------------- the connection

interface Answer {
  status: number | null
  body: string
  error: Error | null
}

function handler(
  onDone: (a: Answer) => void,
  hooks: {
    onConnect?: (abort: (e?: Error) => void) => void
    onHeaders?: () => void
    onData?: (chunk: Buffer, resume: () => void) => boolean
    discardBody?: boolean
  } = {},
): Dispatcher.DispatchHandler {
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
      if (hooks.discardBody !== true) a.body += chunk.toString()
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
async function rawServer(
  answer: (socket: Socket, head: string, n: number) => void,
): Promise<{ origin: string; accepted: number; closed: number; heads: string[]; server: Server }> {
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

test("client: a connection idle past the server's Keep-Alive hint is replaced before it is used", async () => {
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
    if (head.startsWith('GET /slow'))
      s.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\npart') // never finishes
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
  assert.deepEqual(
    srv.heads.map((h) => h.split(' ')[1]),
    ['/', '/'],
  )
  await c.close()
  srv.server.close()
})

test("client: a cut-off answer fails with undici's SocketError; a refused connection with ECONNREFUSED", async () => {
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

/** `p`, or a failure naming `what` if it takes longer than a hang would (the client itself has no timeout here). */
function settled<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer after 20 s (waiting for a close that never comes?)`)), 20_000)
  })
  return Promise.race([p, hang]).finally(() => clearTimeout(timer))
}

test('client: a server sending trailer lines forever fails the exchange as a parser error, its memory bounded', async () => {
  let written = 0
  const srv = await rawServer((s) => {
    s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n')
    const line = `X-More: ${'m'.repeat(1000)}\r\n`
    // "Forever", bounded: 200 lines (200 KB) a read apart, stopped when the client hangs up.
    let n = 0
    const more = (): void => {
      if (s.destroyed || n++ >= 200) return
      written += line.length
      s.write(line, () => setImmediate(more))
    }
    more()
  })
  const c = client(srv.origin)
  const r = await settled(send(c), 'endless trailers')
  assert.equal(r.error?.name, 'HTTPParserError')
  assert.equal(r.error?.message, 'trailer section too large')
  assert.equal(r.body, 'ok')
  assert.ok(written < 200 * 1010, `the client hung up before the server was done (${written} bytes written)`)
  await c.close()
})

test("client: framing errors fail the exchange at once with the parser's reason, not at a timeout or the close", async () => {
  const srv = await rawServer((s, head) => {
    // Each answer leaves the connection open: only the parser can end these exchanges.
    if (head.startsWith('GET /space')) s.write('HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\n')
    else if (head.startsWith('GET /http09')) s.write('hello from HTTP/0.9')
    else if (head.startsWith('GET /nul')) s.write('HTTP/1.1 200 OK\r\nX: a\0b\r\nContent-Length: 2\r\n\r\n')
    else s.write('HTTP/1.1 200 OK\nContent-Length: 2\n\nok') // bare LF: an answer
  })
  const c = client(srv.origin)
  const reasons: Record<string, string | undefined> = {}
  for (const path of ['/space', '/http09', '/nul']) {
    const r = await settled(send(c, path), path)
    assert.equal(r.error?.name, 'HTTPParserError', `${path}: ${String(r.error)}`)
    reasons[path] = r.error?.message
  }
  assert.deepEqual(reasons, { '/space': 'whitespace before a header colon', '/http09': 'malformed status line', '/nul': 'control character in a header' })
  assert.deepEqual(await settled(send(c, '/bare-lf'), 'bare LF'), { status: 200, body: 'ok', error: null })
  assert.deepEqual(await send(c, '/bare-lf'), { status: 200, body: 'ok', error: null }, 'and its connection is reused')
  assert.equal(srv.accepted, 4, 'one connection per failed exchange, one for both good ones')
  await c.close()
})

test('client: an answer with both Content-Length and Transfer-Encoding is read by its chunks and its connection is not reused', async () => {
  const srv = await rawServer((s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 50\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n'))
  const c = client(srv.origin)
  for (let i = 0; i < 3; i++) assert.deepEqual(await settled(send(c), 'CL + TE'), { status: 200, body: 'ok', error: null })
  assert.equal(srv.accepted, 3)
  await c.close()
})

test('client: body bytes a 204 sends in a later read close its connection; the next request is never answered by them', async () => {
  const stray = new Map<Socket, boolean>()
  const srv = await rawServer((s) => {
    // The body a 204 promised arrives in a read of its own, just before the next answer on the same connection.
    if (stray.get(s)) s.write('hello')
    stray.set(s, true)
    setTimeout(() => s.write('HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n'), 5)
  })
  const c = client(srv.origin)
  let disconnects = 0
  c.on('disconnect', () => disconnects++)
  for (let i = 0; i < 6; i++) assert.deepEqual(await settled(send(c), '204'), { status: 204, body: '', error: null }, `request ${i + 1}`)
  assert.equal(srv.accepted, 6, 'each 204 that announced a body took its connection with it')
  await c.close()
  assert.equal(disconnects, 6)
})

test('client: a 204 without a length whose server sends bytes anyway: the exchange they land on fails by that name, its connection goes, the next is answered', async () => {
  // The case of issue 32 item 12: nothing announced a body, so the connection is reused; the stray bytes come in a
  // read of their own, after the next request is written and before its answer. They are never parsed as that answer.
  const answered = new Set<Socket>()
  const srv = await rawServer((s) => {
    if (answered.has(s)) s.write('hello')
    answered.add(s)
    setTimeout(() => s.write('HTTP/1.1 204 No Content\r\n\r\n'), 5)
  })
  const c = client(srv.origin)
  assert.deepEqual(await settled(send(c), 'first 204'), { status: 204, body: '', error: null })
  const next = await settled(send(c), 'the request the stray bytes land on')
  assert.deepEqual([next.error?.name, next.error?.message, next.status], ['HTTPParserError', 'data after a response without a body', null])
  assert.deepEqual(await settled(send(c), 'on a new connection'), { status: 204, body: '', error: null })
  assert.equal(srv.accepted, 2, 'the connection the stray bytes came on was closed')
  await c.close()
})

test('client: body bytes after a HEAD answer, sent in a later read, fail the exchange they would have answered by that name, and its connection goes', async () => {
  const strayFor = new Set<Socket>()
  const srv = await rawServer((s, head) => {
    // A HEAD answer's Content-Length is the GET's: it does not say the body will not come. This server sends it anyway, late.
    if (strayFor.delete(s)) s.write('hello')
    if (head.startsWith('HEAD')) strayFor.add(s)
    setTimeout(() => s.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n' + (head.startsWith('HEAD') ? '' : 'world')), 5)
  })
  const c = client(srv.origin)
  const head = await settled(new Promise<Answer>((resolve) => c.dispatch({ origin: 'http://x', path: '/', method: 'HEAD' }, handler(resolve))), 'HEAD')
  assert.deepEqual(head, { status: 200, body: '', error: null })
  const next = await settled(send(c), 'GET after the HEAD')
  assert.deepEqual([next.error?.name, next.error?.message, next.body], ['HTTPParserError', 'data after a response without a body', ''])
  assert.deepEqual(await settled(send(c), 'GET on a new connection'), { status: 200, body: 'world', error: null })
  assert.equal(srv.accepted, 2, 'the connection the stray bytes came on was closed')
  await c.close()
})

test('run: a parser error is counted by its reason in errorKinds, the text report and the per-request log', async () => {
  // One request at a time (-c 1): the n-th GET the server reads gets the n-th answer. The pre-run check's
  // probe (an OPTIONS with an invalid Content-Length) is refused with a 400, as an HTTP/1.1 server must.
  let gets = 0
  const srv = await rawServer((s, h) => {
    if (!h.startsWith('GET ')) return void s.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
    const n = ++gets
    s.write(
      n % 3 === 1
        ? 'HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\nx'
        : n % 3 === 2
          ? 'HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok'
          : 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    )
  })
  const rows: RequestRecord[] = []
  const result = await run({
    urls: [`${srv.origin}/`],
    requests: 9,
    concurrency: 1,
    warmup: 0,
    mode: 'plain',
    seed: 1,
    requestSink: { write: (r) => (rows.push(r), true), waitForDrain: async () => {} },
  })
  const phase = result.phases.plain!
  const kinds = { 'HTTPParserError (invalid content-length)': 3, 'HTTPParserError (whitespace before a header colon)': 3 }
  assert.deepEqual([phase.requests, phase.ok, phase.errorKinds], [9, 3, kinds])
  assert.deepEqual(
    rows.map((r) => r.error),
    Array.from({ length: 9 }, (_, i) => [...Object.keys(kinds), null][i % 3]),
  )
  const text = renderText(result)
  assert.match(text, /\[3\] HTTPParserError \(invalid content-length\)/)
  assert.match(text, /\[3\] HTTPParserError \(whitespace before a header colon\)/)
  assert.deepEqual(parseResult(renderJson(result), 'the run').phases.plain!.errorKinds, kinds, 'kept in the saved JSON')
})

test("client: returning false from onData pauses the socket until resume(): nothing is delivered meanwhile and the server's writes block", async () => {
  // Chunks written as fast as the client takes them, until the client has resumed or CAP is reached: more than
  // loopback's socket buffers hold (net.ipv4.tcp_rmem's 32 MiB at most, plus the sender's), so a client that kept
  // reading while paused lets the server write it all.
  const CAP = 64 * 1024 * 1024
  const piece = Buffer.alloc(64 * 1024, 'b')
  const chunk = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
  const server = { queued: 0, flushed: 0, lastProgress: 0, stop: false }
  const srv = await rawServer((s) => {
    s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')
    const pump = (): void => {
      while (!s.destroyed) {
        if (server.stop || server.queued >= CAP) return void s.write('0\r\n\r\n')
        server.queued += piece.length
        const more = s.write(chunk, () => {
          server.flushed += piece.length
          server.lastProgress = performance.now()
        })
        if (!more) return void s.once('drain', pump)
      }
    }
    pump()
  })
  // The server's writes are blocked: nothing flushed to the kernel for 100 ms while it has bytes to write.
  const blocked = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = setInterval(() => {
        if (server.flushed >= CAP) done(new Error(`the server wrote ${CAP} bytes while the client was paused: the socket was never paused`))
        else if (server.lastProgress > 0 && performance.now() - server.lastProgress > 100) done()
      }, 20)
      const giveUp = setTimeout(() => done(new Error('the server never blocked within 20 s')), 20_000)
      const done = (err?: Error): void => {
        clearInterval(check)
        clearTimeout(giveUp)
        if (err) reject(err)
        else resolve()
      }
    })
  const c = client(srv.origin)
  let received = 0
  let paused = false
  let deliveredWhilePaused = 0
  let flushedAtResume = 0
  let waited: Promise<void> | null = null
  const r = await send(c, '/', {
    discardBody: true, // counted, not kept
    onData: (data, resume) => {
      if (paused) deliveredWhilePaused += data.length
      received += data.length
      if (waited !== null) return true
      paused = true
      waited = blocked().then(() => {
        paused = false
        flushedAtResume = server.flushed
        server.stop = true
        resume()
      })
      waited.catch(() => {}) // awaited below
      return false
    },
  })
  await waited
  assert.equal(deliveredWhilePaused, 0, 'no body delivered between onData returning false and resume()')
  assert.ok(flushedAtResume < CAP, `the server's writes blocked while the client was paused (${flushedAtResume} bytes written)`)
  assert.deepEqual([r.status, r.error, received], [200, null, server.queued], 'after resume() the rest arrives')
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
