/**
 * A precise per-attempt timeout (-t). undici's headersTimeout/bodyTimeout
 * run on its coarse "fast timers" (ticks of ~500 ms), so `-t 300ms` fired
 * after about a second. Here each attempt gets a deadline from the moment
 * it is dispatched (the connection pool's lease of the attempt carries it,
 * see connection-pool.ts): if the response has not
 * ended by then, the attempt is aborted with undici's own
 * HeadersTimeoutError (no headers yet) or BodyTimeoutError (headers, but the
 * body did not finish), so error kinds keep undici's names. undici's own
 * timeouts stay as a backstop.
 *
 * One native timer serves every attempt of a pool (a timer per
 * attempt cost a setTimeout and a clearTimeout, about 5 µs a request): all
 * its attempts have the same timeout, so the order they are dispatched in is
 * the order of their deadlines, and a doubly-linked list of the pending ones
 * is a deadline queue with O(1) insert and remove. The timer is armed for
 * the head's deadline; when it fires it expires every attempt that is due
 * and re-arms for the new head (even when an expiry started a new attempt
 * that armed it for its own, later, deadline) (an attempt that finished in the meantime
 * just left the list; the timer then re-arms later). A deadline is met to
 * the native timer's precision, as before.
 */
import { errors } from 'undici'
import { eventNow } from '../core/event-clock.js'
// Node 20's global `performance` is a lazy getter run at every use; the module's own object is read directly (several clock reads per request).
import { performance } from 'node:perf_hooks'

/** An entry of a DeadlineQueue: a pending attempt. */
export abstract class Deadline {
  prev: Deadline | null = null
  next: Deadline | null = null
  /** performance.now() at which it expires. */
  at = 0
  /** The queue whose list it is in; null when not queued. */
  queue: DeadlineQueue | null = null

  abstract expire(): void
}

/**
 * Pending attempts in deadline order (= insertion order: one timeout for all),
 * with one native timer for the earliest.
 */
export class DeadlineQueue {
  #head: Deadline | null = null
  #tail: Deadline | null = null
  #timer: NodeJS.Timeout | null = null
  /** When the armed timer is due (performance.now()). */
  #timerAt = 0
  readonly #fire = (): void => this.#expireDue()

  constructor(readonly timeoutMs: number) {}

  add(d: Deadline): void {
    d.at = eventNow() + this.timeoutMs
    d.queue = this
    d.prev = this.#tail
    d.next = null
    if (this.#tail) this.#tail.next = d
    else this.#head = d
    this.#tail = d
    if (this.#timer === null) this.#arm(d.at)
  }

  remove(d: Deadline): void {
    if (d.queue !== this) return
    d.queue = null
    const { prev, next } = d
    if (prev) prev.next = next
    else this.#head = next
    if (next) next.prev = prev
    else this.#tail = prev
    d.prev = d.next = null
    // Nothing left to watch: do not keep the process alive for a timer.
    if (this.#head === null && this.#timer !== null) {
      clearTimeout(this.#timer)
      this.#timer = null
    }
  }

  #arm(at: number): void {
    this.#timerAt = at
    this.#timer = setTimeout(this.#fire, Math.max(1, Math.ceil(at - performance.now())))
  }

  #expireDue(): void {
    this.#timer = null
    const now = performance.now()
    let d = this.#head
    while (d !== null && d.at <= now) {
      this.remove(d)
      d.expire()
      d = this.#head
    }
    // The head's deadline is later (the attempts that were due finished in time): wait for it.
    // An expiry above may have started the next request at once, and its add()
    // armed the timer a full timeout away; the head is older than that
    // attempt, so the timer must be re-armed for the head, or it would expire
    // up to one timeout late (-t 100ms -c 10 gave 200 ms timeouts).
    if (d === null) return
    if (this.#timer !== null && this.#timerAt <= d.at) return
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#arm(d.at)
  }

  /** For tests: pending attempts, and when the timer is due. */
  get pending(): number {
    let n = 0
    for (let d = this.#head; d; d = d.next) n++
    return n
  }

  get timerAt(): number | null {
    return this.#timer === null ? null : this.#timerAt
  }
}

/**
 * undici's own error for where the attempt was when -t ran out, so error
 * kinds keep undici's names: still waiting for its connection (nothing was
 * written), waiting for the headers, or in the body.
 */
export function timeoutError(where: 'connect' | 'headers' | 'body'): Error {
  if (where === 'connect') return new errors.ConnectTimeoutError('Connect Timeout Error')
  return where === 'body' ? new errors.BodyTimeoutError('Body Timeout Error') : new errors.HeadersTimeoutError('Headers Timeout Error')
}
