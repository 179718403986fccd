/**
 * Time per answer of hedgebench's HTTP/1.1 response parser
 * (src/engine/h1-response-parser.ts), for the parser figures of docs/benchmarks.md: a
 * Node server's typical answer (status line, five headers, a 3-byte body)
 * parsed again and again in one process, with and without the header views
 * a handler may ask for.
 *
 *   node dist/bench/parse-bench.js [ANSWERS_PER_ROUND]
 *
 * Prints ns per answer for 5 rounds after a warm-up, each way. One process,
 * no network: it measures the parser only, not what the socket costs.
 */
import { ResponseParser, type ResponseSink } from '../src/engine/h1-response-parser.js'

const ANSWER = Buffer.from(
  'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 3\r\nDate: Tue, 01 Dec 2026 23:07:24 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\n\r\nok\n',
)
const perRound = Number(process.argv[2] ?? 500_000)
if (!(perRound >= 1000)) {
  process.stderr.write('usage: parse-bench [ANSWERS_PER_ROUND >= 1000]\n')
  process.exit(2)
}

/** Counts what it is given, so the work cannot be optimized away. */
function sink(wantsHeaders: boolean): ResponseSink & { fields: number; bytes: number } {
  return {
    fields: 0,
    bytes: 0,
    wantsHeaders: () => wantsHeaders,
    onResponseHeaders(_status, raw) {
      this.fields += raw.length
      return true
    },
    onResponseBody(chunk) {
      this.bytes += chunk.length
      return true
    },
    onResponseEnd() {},
  }
}

function round(parser: ResponseParser, answers: number): void {
  for (let i = 0; i < answers; i++) {
    parser.expect(false)
    // A fresh view per answer, as each socket read is a Buffer of its own.
    parser.execute(Buffer.from(ANSWER.buffer, ANSWER.byteOffset, ANSWER.length))
  }
}

for (const wants of [false, true]) {
  const s = sink(wants)
  const parser = new ResponseParser(s)
  round(parser, perRound / 2)
  const ns: string[] = []
  for (let r = 0; r < 5; r++) {
    const start = process.hrtime.bigint()
    round(parser, perRound)
    ns.push((Number(process.hrtime.bigint() - start) / perRound).toFixed(0))
  }
  process.stdout.write(
    `${wants ? 'with header views   ' : 'without header views'}: ${ns.join(', ')} ns per answer (${s.fields > 0 ? 'views made' : 'no views'})\n`,
  )
}
