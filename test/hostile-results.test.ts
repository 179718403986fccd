/**
 * Crafted result files given to `report`, `compare` and `merge`, as an
 * attacker would hand them over: counts out of range, a `__proto__` key,
 * nesting 200,000 deep, a 500 MB file, an HdrHistogram that inflates to
 * 1 GB. Each is refused with exit 2 and one stderr line naming the file and
 * what is wrong, and the process's peak memory (its own resource usage,
 * written as it exits) stays far below what reading the file whole would
 * take.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { closeSync, ftruncateSync, openSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDeflate, deflateSync } from 'node:zlib'
import { UsageError } from '../src/core/errors.js'
import { parseResult, renderJson } from '../src/results/result-json.js'
import { tryDecodeHistogram } from '../src/stats/histogram.js'
import type { RunResult } from '../src/results/run-result.js'
import { killAllChildren, runCli, stderrLines, type CliRun } from './helpers/cli.js'
import { makeHedgedRun } from './helpers/result-fixture.js'

/** The peak memory the issue allows a refusal, in KB (maxRSS's unit). */
const MAX_RSS_KB = 400 * 1024

/** Loaded before the CLI in the child: its peak RSS, written when it exits (however it exits), to the file the test names. */
const RSS_PROBE = `data:text/javascript,${encodeURIComponent(
  "import { writeFileSync } from 'node:fs'; process.on('exit', () => writeFileSync(process.env.HB_MAXRSS_FILE, String(process.resourceUsage().maxRSS)))",
)}`

let dir: string
let valid: string
let base: Record<string, unknown>

/** `text` as a file in the test's directory; its path. */
async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, text)
  return path
}

/** A valid result with `edit` applied to a copy. */
function edited(edit: (r: RunResult) => void): string {
  const copy = structuredClone(base) as unknown as RunResult
  edit(copy)
  return JSON.stringify(copy)
}

/** The compressed V2 form of an HdrHistogram whose payload is 1 GB of zeros (a deflate stream of ~1 MB). */
async function histogramBomb(): Promise<string> {
  const deflate = createDeflate({ level: 9 })
  const out: Buffer[] = []
  deflate.on('data', (chunk: Buffer) => out.push(chunk))
  const ended = new Promise((resolve) => deflate.on('end', resolve))
  const zeros = Buffer.alloc(1 << 20)
  for (let i = 0; i < 1024; i++) if (!deflate.write(zeros)) await new Promise((resolve) => deflate.once('drain', resolve))
  deflate.end()
  await ended
  const body = Buffer.concat(out)
  const head = Buffer.alloc(8)
  head.writeInt32BE(0x1c849314, 0)
  head.writeInt32BE(body.length, 4)
  return Buffer.concat([head, body]).toString('base64')
}

interface Refusal {
  code: number | null
  line: string
  maxRssKb: number
}

async function refusal(args: string[], name: string): Promise<{ run: CliRun; refusal: Refusal }> {
  const rssFile = join(dir, `${name}.rss`)
  const run = await runCli(args, { nodeArgs: ['--import', RSS_PROBE], env: { HB_MAXRSS_FILE: rssFile }, timeoutMs: 20_000 })
  const lines = stderrLines(run)
  assert.equal(run.timedOut, false, `${name}: ended within the helper's 20 s`)
  assert.equal(lines.length, 1, `${name}: one stderr line, got ${JSON.stringify(run.stderr)}`)
  return { run, refusal: { code: run.code, line: lines[0]!, maxRssKb: Number(await readFile(rssFile, 'utf8')) } }
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hedgebench-hostile-'))
  base = JSON.parse(renderJson(makeHedgedRun())) as Record<string, unknown>
  valid = await file('valid.json', JSON.stringify(base))
})
after(async () => {
  killAllChildren()
  await rm(dir, { recursive: true, force: true })
})

/** Each crafted file and the words the refusal must have (beside the file's path). */
const CASES: Array<{ name: string; make: () => Promise<string>; says: RegExp }> = [
  {
    name: 'count-1e300',
    make: () =>
      file(
        'count-1e300.json',
        edited((r) => (r.phases.plain!.requests = 1e300)),
      ),
    says: /phases\.plain\.requests must be a whole number from 0 to 9007199254740991/,
  },
  {
    name: 'count-negative',
    make: () =>
      file(
        'count-negative.json',
        edited((r) => (r.phases.hedged!.hedging!.hedgesSent = -5)),
      ),
    says: /phases\.hedged\.hedging\.hedgesSent must be a whole number from 0/,
  },
  {
    name: 'count-fraction',
    make: () =>
      file(
        'count-fraction.json',
        edited((r) => (r.phases.plain!.slow.count = 1.5)),
      ),
    says: /phases\.plain\.slow\.count must be a whole number from 0/,
  },
  {
    name: 'number-overflows',
    make: () => file('number-overflows.json', JSON.stringify(base).replace(/"p50":[0-9.]+/, '"p50":1e400')),
    says: /latencyMs\.p50 must be a number/,
  },
  {
    name: 'proto-key',
    make: () => file('proto-key.json', JSON.stringify(base).replace('"statusCodes":{', '"statusCodes":{"__proto__":{"200":1},')),
    says: /statusCodes\.__proto__ is not allowed as a key/,
  },
  {
    name: 'constructor-key',
    make: () =>
      file(
        'constructor-key.json',
        edited((r) => (r.phases.hedged!.errorKinds = JSON.parse('{"constructor":3}'))),
      ),
    says: /errorKinds\.constructor is not allowed as a key/,
  },
  {
    name: 'nesting',
    make: () => file('nesting.json', JSON.stringify(base).replace('"label":', `"deep":${'['.repeat(200_000)}${']'.repeat(200_000)},"label":`)),
    says: /nested deeper than 64 levels/,
  },
  {
    name: 'size',
    make: async () => {
      // Sparse: 500 MB by its size, no disk used; refused by fstat before a byte is read.
      const path = join(dir, 'size.json')
      const fd = openSync(path, 'w')
      ftruncateSync(fd, 500 * 1024 * 1024)
      closeSync(fd)
      return path
    },
    says: /524288000 bytes, over the limit of 64 MB for a result file \(--max-result-size MB raises it\)/,
  },
  {
    name: 'histogram-bomb',
    make: async () =>
      file(
        'histogram-bomb.json',
        edited((r) => (r.phases.plain!.histogram = bomb)),
      ),
    says: /phases\.plain\.histogram inflates to more than 1048576 bytes/,
  },
]
let bomb = ''

// Each case its own CLI processes, several at a time: the cases are independent, and one after another they took
// about 50 s of a 3-minute suite. Each process's own peak memory is what is held to the bound.
describe('crafted result files: exit 2, one line naming the file and the fault, bounded memory', { concurrency: 4 }, () => {
  const paths = new Map<string, string>()
  before(async () => {
    bomb = await histogramBomb()
    for (const c of CASES) paths.set(c.name, await c.make())
  })

  for (const c of CASES) {
    test(c.name, async () => {
      const path = paths.get(c.name)!
      const commands: Array<[string, string[]]> = [
        ['report', ['report', path]],
        ['compare', ['compare', valid, path]],
      ]
      // merge reads through the same loader: the cases about reading itself (size, depth, inflating) once more.
      if (['size', 'nesting', 'histogram-bomb'].includes(c.name)) commands.push(['merge', ['merge', path]])
      for (const [command, args] of commands) {
        const { refusal: r } = await refusal(args, `${c.name}-${command}`)
        assert.equal(r.code, 2, `${command}: ${r.line}`)
        assert.ok(r.line.startsWith(`hedgebench: ${path}: `), `${command} names the file: ${r.line}`)
        assert.match(r.line, c.says, command)
        assert.ok(r.maxRssKb > 0 && r.maxRssKb < MAX_RSS_KB, `${command}: peak RSS ${Math.round(r.maxRssKb / 1024)} MB`)
      }
    })
  }
})

test('--max-result-size: a file over it is refused by its size, naming the limit; raising it reads the file', async () => {
  const small = await refusal(['report', valid, '--max-result-size', '0.01'], 'limit-low')
  assert.equal(small.refusal.code, 2)
  assert.match(small.refusal.line, /valid\.json: \d+ bytes, over the limit of 0\.01 MB for a result file/)
  const read = await runCli(['report', valid, '--max-result-size', '1', '-o', 'json'])
  assert.equal(read.code, 0, read.stderr)
  assert.deepEqual(JSON.parse(read.stdout), base)
  const bad = await refusal(['compare', valid, valid, '--max-result-size', '0'], 'limit-zero')
  assert.equal(bad.refusal.code, 2)
  assert.match(bad.refusal.line, /--max-result-size needs a number of MB above 0/)
})

/** LEB128 of a ZigZag-encoded run of `zeros` empty buckets, as the V2 encoding writes one. */
function zeroRun(zeros: number): number[] {
  let value = 2 * zeros - 1
  const bytes: number[] = []
  while (value >= 0x80) {
    bytes.push((value % 0x80) | 0x80)
    value = Math.floor(value / 0x80)
  }
  return [...bytes, value]
}

// The timeout turns the old behaviour (a walk of 2^40 buckets) into a failure, not a hung suite.
test('a histogram whose counts claim 2^40 empty buckets is refused when read, never walked bucket by bucket', { timeout: 10_000 }, () => {
  const counts = Buffer.from([...zeroRun(2 ** 40), 2])
  const header = Buffer.alloc(40)
  header.writeInt32BE(0x1c849313, 0)
  header.writeInt32BE(counts.length, 4)
  header.writeInt32BE(3, 12)
  header.writeBigInt64BE(1n, 16)
  header.writeBigInt64BE(60_000_000n, 24)
  header.writeDoubleBE(1, 32)
  const body = deflateSync(Buffer.concat([header, counts]))
  const head = Buffer.alloc(8)
  head.writeInt32BE(0x1c849314, 0)
  head.writeInt32BE(body.length, 4)
  const payload = Buffer.concat([head, body]).toString('base64')
  assert.equal(tryDecodeHistogram(payload), null)
  assert.throws(
    () =>
      parseResult(
        edited((r) => (r.phases.hedged!.histogram = payload)),
        'runaway.json',
      ),
    (err: Error) =>
      err instanceof UsageError && err.message === 'runaway.json: invalid result: phases.hedged.histogram has counts over more than 8388608 buckets',
  )
})
