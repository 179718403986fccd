/**
 * Seeded fuzzing of the input parsers (durations, -H, --fail-if, profiles,
 * saved results, -m metadata, -d templates, target URLs, -d/-D data for a
 * gRPC call): random and mutated inputs either parse to a well-formed value
 * or throw a UsageError with a one-line message; never any other exception,
 * never a multi-line message, never a hang (the CLI turns a UsageError into
 * that one line and exit 2). The
 * HTTP/1.1 response parser likewise: an answer or a ParseError, and the same
 * one however the bytes are split across reads.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseDuration } from '../src/core/duration.js'
import { UsageError } from '../src/core/errors.js'
import { parseFailIf } from '../src/report/fail-if.js'
import { parseHeader } from '../src/core/header-parse.js'
import { seededRandom } from '../src/core/random.js'
import { parseProfile } from '../src/sim/profile.js'
import { ParseError, ResponseParser } from '../src/engine/h1-response-parser.js'
import { parseResult, renderJson } from '../src/results/result-json.js'
import { grpcMetadata } from '../src/cli/grpc-flags.js'
import { compileTemplate } from '../src/protocol/grpc-template.js'
import { fromJsonText } from '../src/protocol/grpc-message.js'
import { loadGrpcMethod } from '../src/protocol/grpc-method.js'
import { resolveOptions } from '../src/run/resolve-options.js'
import { SIM_PROTO, SIM_WORK_CALL } from '../src/sim/grpc-sim-service.js'
import { makeHedgedRun } from './helpers/result-fixture.js'
import { runCli, stderrLines } from './helpers/cli.js'

const CASES = 3000

type Rand = () => number
const pick = <T>(r: Rand, list: readonly T[]): T => list[Math.floor(r() * list.length)]!
const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1))

/** Characters that tend to break parsers: digits, units, signs, separators, whitespace, control, non-ASCII. */
const ALPHABET = [
  ...'0123456789',
  ...'.,:;-+%<>=!_ ',
  'ms',
  's',
  'm',
  'us',
  'µs',
  'h',
  'e',
  'E',
  'x',
  'p99',
  'p50',
  'rps',
  'error_rate',
  '\t',
  '\n',
  '\r',
  '\0',
  '\u00a0',
  '\u2028',
  '\ufeff',
  '"',
  "'",
  '\\',
  '{',
  '}',
  '[',
  ']',
  'NaN',
  'Infinity',
  '1e308',
  '-0',
  'Authorization',
  'Bearer',
  'é',
  '漢',
  '\u{1F600}',
  '\ud800',
]

function randomText(r: Rand, max = 12): string {
  let s = ''
  const n = int(r, 0, max)
  for (let i = 0; i < n; i++) s += pick(r, ALPHABET)
  return s
}

/** Replace, insert or delete a few (`least` to 3) characters of a valid example, with pieces from `alphabet`. */
function mutate(r: Rand, text: string, alphabet: readonly string[] = ALPHABET, least = 1): string {
  let s = text
  for (let k = int(r, least, 3); k > 0; k--) {
    const at = int(r, 0, s.length)
    const op = int(r, 0, 2)
    if (op === 0) s = s.slice(0, at) + pick(r, alphabet) + s.slice(at)
    else if (op === 1) s = s.slice(0, at) + s.slice(at + 1)
    else s = s.slice(0, at) + pick(r, alphabet) + s.slice(at + 1)
  }
  return s
}

function inputs(seed: number, valid: readonly string[]): string[] {
  const r = seededRandom(seed)
  const out: string[] = [...valid]
  for (let i = 0; i < CASES; i++) out.push(r() < 0.5 ? mutate(r, pick(r, valid)) : randomText(r))
  return out
}

/** Runs `parse`; returns the value, or undefined when it threw the allowed error. */
function parsesOrUsage<T>(what: string, input: unknown, parse: () => T): T | undefined {
  try {
    return parse()
  } catch (err) {
    const shown = `${what}(${JSON.stringify(input)})`
    if (!(err instanceof UsageError)) assert.fail(`${shown} threw ${err instanceof Error ? err.stack : String(err)}`)
    assert.ok(err.message.trim().length > 0, `${shown}: empty message`)
    assert.ok(!/[\r\n\v\f\x85\u2028\u2029]/.test(err.message), `${shown}: message is not one line: ${JSON.stringify(err.message)}`)
    return undefined
  }
}

test('parseDuration: a finite, non-negative number of ms, or a one-line UsageError', () => {
  let parsed = 0
  for (const input of inputs(1, ['250ms', '1.5s', '2m', '20', '.5s', '800us', '1h', '0', '10x', 'abc', ''])) {
    for (const bare of ['ms', 's'] as const) {
      const ms = parsesOrUsage('parseDuration', input, () => parseDuration(input, '-t', bare))
      if (ms === undefined) continue
      parsed++
      assert.ok(typeof ms === 'number' && Number.isFinite(ms) && ms >= 0, `parseDuration(${JSON.stringify(input)}) = ${ms}`)
    }
  }
  assert.ok(parsed > 100, `some inputs parsed (${parsed})`)
})

test('parseHeader: a [name, value] without control characters, or a one-line UsageError', () => {
  let parsed = 0
  for (const input of inputs(2, ['Authorization: Bearer x', 'X-Api-Key:k', 'Accept: */*', 'Host:a:b', 'NoColon', ': value', 'Na me: v'])) {
    const header = parsesOrUsage('parseHeader', input, () => parseHeader(input))
    if (header === undefined) continue
    parsed++
    const [name, value] = header
    assert.match(name, /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, `name from ${JSON.stringify(input)}`)
    assert.ok(!/[\x00-\x08\x0a-\x1f\x7f]/.test(value), `no control character but tab in the value from ${JSON.stringify(input)}`)
  }
  assert.ok(parsed > 100, `some inputs parsed (${parsed})`)
})

test('parseFailIf: a condition with a finite value, or a one-line UsageError', () => {
  let parsed = 0
  for (const input of inputs(3, ['p99>+10%', 'rps<-5%', 'p50>25ms', 'error_rate>1%', 'extra_load>10', 'slow>=1', 'p99.9<=1.5s', 'max>800us'])) {
    const condition = parsesOrUsage('parseFailIf', input, () => parseFailIf(input))
    if (condition === undefined) continue
    parsed++
    assert.ok(Number.isFinite(condition.value), `value of ${JSON.stringify(input)}`)
    assert.ok(['>', '<', '>=', '<='].includes(condition.op))
  }
  assert.ok(parsed > 100, `some inputs parsed (${parsed})`)
})

const PROFILES = ['pi', 'gc-pause', 'overload', 'checkout', 'broken-replica', 'shared-slow'].map(
  (name) => JSON.parse(readFileSync(fileURLToPath(new URL(`../../profiles/${name}.json`, import.meta.url)), 'utf8')) as unknown,
)

function randomJson(r: Rand, depth = 0): unknown {
  switch (int(r, 0, depth > 2 ? 5 : 8)) {
    case 0:
      return null
    case 1:
      return r() < 0.5
    case 2:
      return pick(r, [0, -1, 1, 0.5, 2, 64, 65, 1e308, -1e-9, 42, 100, 0xffffffff, 2 ** 53, 7.5])
    case 3:
      return pick(r, ['', ' ', 'auto', 'p95', 'p100', 'uniform', 'lognormal', 'fixed', 'independent', 'pause', 'replica', 'shared', 'plain', 'both'])
    case 4:
      return randomText(r)
    case 5:
      return int(r, -5, 2000)
    case 6:
      return Array.from({ length: int(r, 0, 3) }, () => randomJson(r, depth + 1))
    default: {
      const o: Record<string, unknown> = {}
      for (let i = int(r, 0, 3); i > 0; i--) o[pick(r, ['type', 'min', 'max', 'ms', 'index', 'rate', 'status', randomText(r, 4)])] = randomJson(r, depth + 1)
      return o
    }
  }
}

/** A deep copy of `value` with one random node replaced, deleted or given an extra key. */
function mutateJson(r: Rand, value: unknown): unknown {
  const copy = structuredClone(value) as unknown
  const nodes: Array<Record<string, unknown> | unknown[]> = []
  const walk = (v: unknown): void => {
    if (typeof v === 'object' && v !== null) {
      nodes.push(v as Record<string, unknown>)
      for (const child of Object.values(v)) walk(child)
    }
  }
  walk(copy)
  for (let k = int(r, 1, 3); k > 0; k--) {
    const node = pick(r, nodes)
    const keys = Object.keys(node)
    const key = keys.length > 0 && r() < 0.8 ? pick(r, keys) : randomText(r, 4)
    const op = int(r, 0, 2)
    if (op === 0 && !Array.isArray(node)) delete (node as Record<string, unknown>)[key]
    else (node as Record<string, unknown>)[key] = randomJson(r)
  }
  return copy
}

test('parseProfile: a profile, or a one-line UsageError, for mutated and random JSON', () => {
  const r = seededRandom(4)
  let parsed = 0
  for (const profile of PROFILES)
    assert.ok(
      parsesOrUsage('parseProfile', profile, () => parseProfile(profile, 'fuzz')),
      'the shipped profiles parse',
    )
  for (let i = 0; i < CASES; i++) {
    const input = r() < 0.8 ? mutateJson(r, pick(r, PROFILES)) : randomJson(r)
    const profile = parsesOrUsage('parseProfile', input, () => parseProfile(input, 'fuzz'))
    if (profile === undefined) continue
    parsed++
    assert.ok(profile.replicas >= 1 && Number.isInteger(profile.replicas))
  }
  assert.ok(parsed > 50, `some mutations still parse (${parsed})`)
})

// ---------------------------------------------------------------- the HTTP/1.1 response parser

/** Bytes that tend to break an HTTP/1.1 parser: line ends, separators, digits, hex, control bytes, obs-text. */
const WIRE_ALPHABET = [
  '\r\n',
  '\n',
  '\r',
  ':',
  ' ',
  '\t',
  ';',
  ',',
  '0',
  '5',
  'f',
  'x',
  '\0',
  '\x7f',
  '\xe9',
  'chunked',
  'HTTP/1.1 ',
  '200',
  'Content-Length',
  'Transfer-Encoding',
]
const ANSWERS = [
  'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello',
  'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nX-T: 1\r\n\r\n',
  'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nX: a\r\n b\r\n\r\n',
  'HTTP/1.0 200 OK\nContent-Length: 2\n\nok',
]

/** What parsing `wire` in the given reads gives: the answer as seen by a sink, or the error's reason. */
function parseWire(wire: Buffer, cuts: number[]): string {
  const seen: string[] = []
  const parser = new ResponseParser({
    wantsHeaders: () => true,
    onResponseHeaders: (status, raw) => (seen.push(`${status} ${raw.map((b) => b.toString('latin1')).join('|')}`), true),
    onResponseBody: (chunk) => (seen.push(chunk.toString('latin1')), true),
    onResponseEnd: (trailers) => void seen.push(`end ${trailers?.map((b) => b.toString('latin1')).join('|') ?? ''}`),
  })
  parser.expect(false)
  let from = 0
  try {
    for (const cut of [...cuts, wire.length]) {
      parser.execute(Buffer.from(wire.subarray(from, cut)))
      from = cut
    }
    parser.finish()
  } catch (err) {
    if (!(err instanceof ParseError)) assert.fail(`${JSON.stringify(wire.toString('latin1'))} threw ${err instanceof Error ? err.stack : String(err)}`)
    return `error: ${err.reason}`
  }
  // Body chunks are cut where the reads are: compare them joined.
  return seen.join('')
}

test('response parser: mutated and random answers parse or fail with a reason, the same however the bytes are split', () => {
  const r = seededRandom(11)
  let failed = 0
  for (let i = 0; i < CASES; i++) {
    const text = mutate(r, pick(r, ANSWERS), WIRE_ALPHABET, 0)
    const wire = Buffer.from(text, 'latin1')
    const whole = parseWire(wire, [])
    if (whole.startsWith('error: ')) failed++
    const cut = int(r, 1, Math.max(1, wire.length - 1))
    assert.equal(parseWire(wire, [cut]), whole, `${JSON.stringify(text)} split at ${cut}`)
  }
  assert.ok(failed > CASES / 10 && failed < CASES - CASES / 10, `a mix of answers and errors (${failed} of ${CASES} failed)`)
})

// ---------------------------------------------------------------- the result reader and the other parsers of a user's string

/** A valid saved result, as text and as a value to mutate. */
const RESULT_TEXT = renderJson(makeHedgedRun())
const RESULT = JSON.parse(RESULT_TEXT) as unknown

/** JSON that tends to break a result reader: keys that name prototypes, numbers out of range, deep nesting, huge counts. */
const JSON_ALPHABET = [
  ...ALPHABET,
  '"__proto__":',
  '"constructor":',
  '{"__proto__":{}}',
  '1e400',
  '-5',
  '1e300',
  '[[[[[[[[',
  ']]]]',
  '{',
  '}',
  ',',
  ':',
  'null',
  'true',
  '"histogram":"HIST"',
]

/** Text-level mutations of a valid result: a few pieces of JSON_ALPHABET put in, taken out or swapped at random places. */
function mutatedResultText(r: Rand): string {
  const text = mutate(r, RESULT_TEXT, JSON_ALPHABET)
  // Now and then, nesting far past any result's: the reader must refuse it before anything recurses.
  if (r() >= 0.05) return text
  const depth = int(r, 60, 100_000)
  // Closed as deep as it opens, mostly: an unbalanced one is only "not JSON".
  return text.replace('"label":', `"x":${'['.repeat(depth)}0${']'.repeat(r() < 0.8 ? depth : int(r, 0, 10))},"label":`)
}

test('parseResult: a result, or a one-line UsageError, for mutated, random and deeply nested results', { timeout: 120_000 }, () => {
  const r = seededRandom(21)
  let parsed = 0
  assert.ok(
    parsesOrUsage('parseResult', 'valid', () => parseResult(RESULT_TEXT, 'fuzz.json')),
    'a valid result parses',
  )
  const cases = CASES / 3
  for (let i = 0; i < cases; i++) {
    const choice = r()
    const text = choice < 0.5 ? JSON.stringify(mutateJson(r, RESULT)) : choice < 0.9 ? mutatedResultText(r) : JSON.stringify(randomJson(r))
    const result = parsesOrUsage('parseResult', text.slice(0, 200), () => parseResult(text, 'fuzz.json'))
    if (result === undefined) continue
    parsed++
    // What parses renders: every count a renderer divides or sums by is a whole number.
    for (const phase of Object.values(result.phases))
      for (const n of [phase!.requests, phase!.errors, phase!.attempts]) assert.ok(Number.isSafeInteger(n) && n >= 0)
  }
  assert.ok(parsed > 50 && parsed < cases, `some mutations still parse, most do not (${parsed} of ${cases})`)
})

test('-m metadata: [name, value] strings, or a one-line UsageError', () => {
  let parsed = 0
  for (const input of inputs(22, ['{"authorization": "Bearer x"}', '{"x-token-bin": "AAE="}', '{}', '{"a": 1}', '[]', 'null', '{"__proto__": "x"}'])) {
    const metadata = parsesOrUsage('grpcMetadata', input, () => grpcMetadata(input))
    if (metadata === undefined) continue
    parsed++
    for (const [name, value] of metadata) assert.ok(typeof name === 'string' && typeof value === 'string')
  }
  assert.ok(parsed > 3, `some inputs parsed (${parsed})`)
})

test('-d templates: compiled and run to a string, or a one-line UsageError', () => {
  const r = seededRandom(23)
  let parsed = 0
  for (const input of inputs(24, [
    '{"id": "{{.RequestNumber}}"}',
    '{{.UUID}}',
    '{{randomInt 1 10}}',
    '{{randomString 8}}',
    '{{ randomInt 5 2 }}',
    '{{nope}}',
    '{{',
  ])) {
    const render = parsesOrUsage('compileTemplate', input, () => compileTemplate(input, '-d'))
    if (render === undefined) continue
    parsed++
    assert.equal(typeof render({ requestNumber: int(r, 0, 1000), random: r }), 'string')
  }
  assert.ok(parsed > 100, `some inputs parsed (${parsed})`)
})

test('targets: a run with the URL resolves, or a one-line UsageError', () => {
  let parsed = 0
  const valid = [
    'http://127.0.0.1:8080/',
    'https://h/x?y=1',
    'grpc://h:50051',
    'grpcs://h:443',
    'localhost:8080',
    'ftp://h/',
    'http://',
    'http://u:p@h/',
    'http://[::1]:80/',
  ]
  for (const input of inputs(25, valid)) {
    const run = parsesOrUsage('resolveOptions', input, () => resolveOptions({ urls: [input] }, 1))
    if (run === undefined) continue
    parsed++
    assert.equal(run.urls.length, 1)
  }
  assert.ok(parsed > 20, `some inputs parsed (${parsed})`)
})

test('-d and -D data for a gRPC call: the encoded message, or a one-line UsageError', () => {
  const method = loadGrpcMethod({ proto: SIM_PROTO }, SIM_WORK_CALL)
  let parsed = 0
  const valid = ['{"payload": "x", "replyBytes": 10}', '{"reply_bytes": "9007199254740993"}', '{}', '{"payload": 5}', '{"nope": 1}', '[]', '{"replyBytes": -1}']
  for (const input of inputs(26, valid)) {
    const bytes = parsesOrUsage('fromJsonText', input, () => fromJsonText(method, input, '-D data.json'))
    if (bytes === undefined) continue
    parsed++
    assert.ok(bytes instanceof Uint8Array)
  }
  assert.ok(parsed > 3, `some inputs parsed (${parsed})`)
})

test('through the CLI: mutated results that parseResult refuses are exit 2 and one line from report, never a trace', { timeout: 120_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'hedgebench-fuzz-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const r = seededRandom(27)
  const refused: string[] = []
  for (let i = 0; refused.length < 8 && i < 1000; i++) {
    const text = i % 2 === 0 ? JSON.stringify(mutateJson(r, RESULT)) : mutatedResultText(r)
    if (parsesOrUsage('parseResult', text.slice(0, 200), () => parseResult(text, 'fuzz.json')) !== undefined) continue
    const path = join(dir, `refused-${refused.length}.json`)
    await writeFile(path, text)
    refused.push(path)
  }
  assert.equal(refused.length, 8)
  for (const path of refused) {
    const run = await runCli(['report', path])
    assert.equal(run.code, 2, run.stderr)
    assert.equal(stderrLines(run).length, 1, run.stderr)
    assert.ok(run.stderr.startsWith(`hedgebench: ${path}: `), run.stderr)
  }
})
