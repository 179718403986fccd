/**
 * `npm run bench:shards`: what a sharded run costs in synchronization and
 * merging, measured on this machine.
 *
 *   node dist/bench/shards-bench.js [--shards 8] [--rounds 3]
 *
 * Start spread: N hedgebench processes launched together with one
 * --start-at (a few seconds ahead), each recording how late its first phase
 * really started; the spread is the latest minus the earliest. Merge time:
 * the N results merged in-process (mergeResults, median of 20) and by the
 * CLI (`hedgebench merge FILE…`, node start-up included). Target: the bench's
 * echo server in its own process on 127.0.0.1.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { mergeResults } from '../src/stats/result-merge.js'
import { renderJson } from '../src/results/result-json.js'
import type { RunResult } from '../src/results/run-result.js'

const HERE = dirname(fileURLToPath(import.meta.url))
const BIN = join(HERE, '..', '..', 'bin', 'hedgebench.js')
const { values: args } = parseArgs({ options: { shards: { type: 'string', default: '8' }, rounds: { type: 'string', default: '3' } } })
const N = Number(args.shards)

function run(cmd: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = performance.now()
  const child = spawn(process.execPath, cmd, { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s))
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s))
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, ms: performance.now() - started })
    }),
  )
}

async function startEcho(): Promise<{ url: string; close(): void }> {
  const child = spawn(process.execPath, [join(HERE, 'echo-server.js')], { stdio: ['ignore', 'pipe', 'inherit'] })
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('echo server did not start in 10 s')), 10_000)
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      const m = /listening (\S+)/.exec(s)
      if (m) {
        clearTimeout(timer)
        resolve(m[1]!)
      }
    })
  })
  return { url, close: () => void child.kill('SIGTERM') }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function main(): Promise<void> {
  const echo = await startEcho()
  const dir = mkdtempSync(join(tmpdir(), 'hedgebench-shards-bench-'))
  try {
    let last: RunResult[] = []
    console.log(`Start spread of ${N} local processes with one --start-at (ms; lateness = first phase start - agreed time)`)
    console.log('round  spread  min late  max late')
    for (let round = 0; round < Number(args.rounds); round++) {
      // Lead time: on a busy 2-core machine, starting node itself takes seconds per process.
      const startAt = new Date(Date.now() + 4000 + N * 1500).toISOString()
      const outs = await Promise.all(
        [...Array(N).keys()].map((i) =>
          run(
            [
              BIN,
              echo.url,
              '-n',
              '400',
              '-c',
              '2',
              '--mode',
              'plain',
              '--warmup',
              '0',
              '--shard',
              `${i}/${N}`,
              '--start-at',
              startAt,
              '--no-save',
              '-o',
              'json',
            ],
            60_000,
          ),
        ),
      )
      const bad = outs.find((o) => o.code !== 0)
      if (bad) throw new Error(`a shard failed: ${bad.stderr}`)
      last = outs.map((o) => JSON.parse(o.stdout) as RunResult)
      const late = last.map((r) => r.start!.lateMs)
      console.log(
        `${String(round + 1).padEnd(6)} ${(Math.max(...late) - Math.min(...late)).toFixed(1).padStart(6)}  ${Math.min(...late)
          .toFixed(1)
          .padStart(8)}  ${Math.max(...late)
          .toFixed(1)
          .padStart(8)}`,
      )
    }
    const inputs = last.map((result, i) => ({ result, source: `shard ${i}` }))
    const times: number[] = []
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now()
      mergeResults(inputs)
      times.push(performance.now() - t0)
    }
    const files = last.map((r, i) => {
      const path = join(dir, `shard-${i}.json`)
      writeFileSync(path, renderJson(r))
      return path
    })
    const cli: number[] = []
    for (let i = 0; i < 3; i++) {
      const r = await run([BIN, 'merge', ...files, '-o', 'json'], 60_000)
      if (r.code !== 0) throw new Error(`merge failed: ${r.stderr}`)
      cli.push(r.ms)
    }
    const noop = await run([BIN, '--help'], 60_000)
    console.log(
      `\nMerge of ${N} results: ${median(times).toFixed(1)} ms in-process (median of 20); hedgebench merge ${median(cli).toFixed(0)} ms wall (median of 3; hedgebench --help alone: ${noop.ms.toFixed(0)} ms)`,
    )
  } finally {
    echo.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
