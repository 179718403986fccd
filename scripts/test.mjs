#!/usr/bin/env node
/**
 * `npm test` after the build: every test file under dist/test, two files at
 * a time (Node's default on 2 cores is one), except the few listed in ALONE,
 * which run afterwards one at a time.
 *
 * Why those run alone: their statistical bounds allow for freezes of the
 * test process itself (test/helpers/freeze-watch.ts), but not for the
 * target's own process being starved of CPU by another test file, which
 * two files at a time on 2 cores can do for 100 ms and more (seen: two
 * grpc-js calls over --slow with no client freeze). Alone they run as they
 * always did.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'test')
const ALONE = new Set(['grpc-hedging.test.js', 'grpc-js-hedging.test.js', 'h2c.test.js', 'hedging-stalls.test.js'])

const files = readdirSync(dir).filter((f) => f.endsWith('.test.js')).sort()
const paired = files.filter((f) => !ALONE.has(f)).map((f) => join(dir, f))
const alone = files.filter((f) => ALONE.has(f)).map((f) => join(dir, f))

function nodeTest(concurrency, list) {
  if (list.length === 0) return 0
  const r = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...list], { stdio: 'inherit' })
  return r.status ?? 1
}

const first = nodeTest(2, paired)
const second = nodeTest(1, alone)
process.exitCode = first !== 0 ? first : second
