/**
 * A garbage collection between phases, so that a measured window starts
 * with an empty young generation and its scavenges only see the window's
 * own short-lived garbage.
 *
 * Before the first window of a run: a full collection. Without it the
 * first scavenge of a run lands inside a measured phase and copies
 * everything start-up left in the young generation (the loaded modules,
 * the parsed options: ~15 MB at -c 40): 30-55 ms with the thread that
 * reads the clock stopped, and a mark-compact of the promoted heap follows
 * a second later (measured with --trace-gc, `npm run bench`'s latency
 * section: p99 +17 ms over wrk before, docs/benchmarks.md).
 * Benchmark harnesses (mitata, benchmark.js) collect between runs for the
 * same reason.
 *
 * Before every later window: only the young generation (a scavenge, ~2 ms).
 * A full collection there frees the previous window's objects (its
 * statistics, slots and policy), and V8 throws away the optimized code that
 * embedded them ("marking dependent code ... reason: weak objects" under
 * --trace-deopt: the whole request path at once): the measured phase then
 * began in slower code while TurboFan compiled it again for ~1 s on the
 * generator's own core (with --warmup 4000 against a fixed 20 ms target at
 * -c 40: p99 24.3-24.5 ms after a full collection, 21.6-21.9 ms after a
 * young one).
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

type Collect = (options?: { type: 'major' | 'minor'; execution: 'sync' }) => void

/** All garbage, or the young generation only. */
export type HeapSettle = 'full' | 'young'

let collect: Collect | null | undefined

/**
 * Collects garbage now, synchronously: all of it (`full`, before a run's
 * first window) or the young generation only (`young`, before the later
 * ones); does nothing where V8 will not expose gc(). `full` is gc() with no
 * options, V8's most thorough collection: with `{ type: 'major' }` instead
 * the old generation kept a lower limit, and a 7-9 ms mark-compact came
 * back inside the plain phase.
 */
export function settleHeap(kind: HeapSettle): void {
  if (collect === undefined) collect = exposeGc()
  if (kind === 'full') collect?.()
  else collect?.({ type: 'minor', execution: 'sync' })
}

/**
 * `gc` without --expose-gc on the command line: the flag, set at run time,
 * takes effect for contexts created after it (Jest's --logHeapUsage does
 * the same). The flag is cleared again so that user code sees no `gc`.
 */
function exposeGc(): Collect | null {
  const own = (globalThis as { gc?: unknown }).gc
  if (typeof own === 'function') return own as Collect
  try {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as unknown
    setFlagsFromString('--no-expose-gc')
    return typeof gc === 'function' ? (gc as Collect) : null
  } catch {
    return null
  }
}
