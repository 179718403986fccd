/**
 * A full garbage collection between phases, so that a measured window starts
 * with an empty young generation and its scavenges only see the window's
 * own short-lived garbage.
 *
 * Without it the first scavenge of a run lands inside the measured phase
 * and copies everything start-up left in the young generation (the loaded
 * modules, the parsed options: ~15 MB at -c 40): 30-55 ms with the thread
 * that reads the clock stopped, and a mark-compact of the promoted heap
 * follows a second later (measured with --trace-gc, `npm run bench`'s
 * latency section: p99 +17 ms over wrk before, README "Performance").
 * Benchmark harnesses (mitata, benchmark.js) collect between runs for the
 * same reason. The collection costs ~10 ms of wall time between phases,
 * never inside one.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

let collect: (() => void) | null | undefined

/** Collects all garbage now (a full, synchronous GC); does nothing where V8 will not expose gc(). */
export function settleHeap(): void {
  if (collect === undefined) collect = exposeGc()
  collect?.()
}

/**
 * `gc` without --expose-gc on the command line: the flag, set at run time,
 * takes effect for contexts created after it (Jest's --logHeapUsage does
 * the same). The flag is cleared again so that user code sees no `gc`.
 */
function exposeGc(): (() => void) | null {
  const own = (globalThis as { gc?: unknown }).gc
  if (typeof own === 'function') return own as () => void
  try {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as unknown
    setFlagsFromString('--no-expose-gc')
    return typeof gc === 'function' ? (gc as () => void) : null
  } catch {
    return null
  }
}
