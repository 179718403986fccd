/**
 * The time of the event being handled: performance.now() read once per
 * turn of the event loop's work, as libuv keeps one loop time per
 * iteration. A read that completes 40 HTTP/2 streams stamps their ends,
 * the next 40 requests those ends start and their deadlines with one
 * clock read instead of about nine reads a request; on a virtual machine's
 * clock (kvm-clock) a read costs 60-120 ns, which was a quarter of the
 * client's CPU per request (docs/benchmarks.md).
 *
 * The reading is forgotten in a microtask, so it never outlives the
 * callback (an I/O event, a timer) that took it and the promise reactions
 * queued before it: every stamp is the time its event was handled, late
 * by at most the synchronous work of that one callback. Only for stamping
 * events: a loop that waits for the time to pass would never see it move.
 */
import { performance } from 'node:perf_hooks'

// Node 20's global `performance` is a lazy getter run at every use: the module's own object is read directly.
let cached = -1

function forget(): void {
  cached = -1
}

export function eventNow(): number {
  if (cached < 0) {
    cached = performance.now()
    queueMicrotask(forget)
  }
  return cached
}
