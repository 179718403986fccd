/**
 * Every test's time limit (scripts/test.mjs loads this into each test file's
 * process with `--import`): a test still running HEDGEBENCH_TEST_LIMIT_MS
 * after it started fails its file, named on stderr, instead of hanging the
 * run. Node 20's --test-timeout bounds a whole file only (and names no
 * test); a test's own `{ timeout }` stays the tighter bound where it has
 * one, so the limit here is above the longest of those.
 */
import { afterEach, beforeEach } from 'node:test'

const limitMs = Number(process.env.HEDGEBENCH_TEST_LIMIT_MS)
if (Number.isFinite(limitMs) && limitMs > 0) {
  const timers = new Map<object, NodeJS.Timeout>()
  beforeEach((t) => {
    const timer = setTimeout(() => {
      process.stderr.write(`\ntest watchdog: "${t.name}" in ${process.argv[1]} still running after ${limitMs} ms: failing the file\n`)
      process.exit(1)
    }, limitMs)
    // A test's own handles keep the process alive; the watchdog alone must not.
    timer.unref()
    timers.set(t, timer)
  })
  afterEach((t) => {
    clearTimeout(timers.get(t))
    timers.delete(t)
  })
}
