/**
 * One HTTP attempt of a hedged request: the undici handler that sees it
 * through, and the single place where its life events are counted.
 */
import type { Dispatcher } from 'undici'
import type { HedgedRequest } from './hedged-request.js'
import { HedgeCancelledError } from './hedge-errors.js'

type Controller = Dispatcher.DispatchController
type Headers = Record<string, string | string[] | undefined>

export class Attempt implements Dispatcher.DispatchHandler {
  controller: Controller | null = null
  /** Headers written to a connection. */
  sent = false
  /** undici delivered its last callback (end or error). */
  finished = false
  /** We stopped it (lost the race). */
  cancelled = false
  /** Its answer is being drained and thrown away (non-fatal status, or too late). */
  discarding = false
  status: number | null = null
  bytes = 0
  #unsentCounted = false

  constructor(
    readonly req: HedgedRequest,
    readonly index: number,
    readonly origin: string,
    readonly launchedAt: number,
  ) {}

  /** Still racing: may yet produce the answer. */
  pending(): boolean {
    return !this.finished && !this.cancelled && !this.discarding
  }

  onRequestStart(controller: Controller, context: unknown): void {
    this.controller = controller
    if (this.cancelled) {
      // Decided while this copy waited for a connection: stop it before
      // undici writes the headers, so no server ever sees it.
      this.#countUnsent()
      controller.abort(new HedgeCancelledError('hedge cancelled before it was sent'))
      return
    }
    this.sent = true
    this.req.policy.observer?.attemptSent(this.index, this.origin)
    this.req.attemptStarted(context)
  }

  onResponseStart(_c: Controller, statusCode: number, headers: Headers, statusMessage?: string): void {
    if (this.cancelled) return
    this.status = statusCode
    this.req.attemptResponded(this, statusCode, headers, statusMessage)
  }

  onResponseData(_c: Controller, chunk: Buffer): void {
    this.bytes += chunk.length
    if (this === this.req.winner) this.req.winnerData(chunk)
  }

  onResponseEnd(_c: Controller, trailers: Headers): void {
    this.finished = true
    const won = this === this.req.winner
    this.#report(null, won)
    if (this.index === 0) this.req.policy.delay.observe(this.#elapsed())
    if (won) this.req.winnerEnded(trailers)
  }

  onResponseError(_c: Controller, err: Error): void {
    this.finished = true
    if (this.cancelled) {
      if (!this.sent) this.#countUnsent()
      this.req.policy.observer?.attemptSettled(this.index, this.origin)
      return
    }
    this.#report(err, false)
    if (!this.discarding || this === this.req.winner) this.req.attemptFailed(this, err)
  }

  /** The request was decided by another attempt (or failed): stop this one. */
  loseRace(): void {
    if (this.finished || this.cancelled || this.discarding) return
    if (!this.sent) {
      this.cancelled = true // counted as unsent when undici hands it a connection or fails it
      return
    }
    if (this.req.policy.cancel === 'ignore') {
      this.discarding = true // Envoy-style: let it finish on its connection, discard the answer
      return
    }
    this.cancelled = true
    this.req.policy.observer?.attemptCancelled(this.index, this.origin)
    if (this.index === 0) this.req.policy.delay.observe(this.#elapsed()) // a lower bound: it was at least this slow
    this.controller?.abort(new HedgeCancelledError('another attempt answered first'))
  }

  /** Abort the winner itself (caller abort or deadline): its error reaches the caller. */
  abortWith(reason: Error): void {
    this.controller?.abort(reason)
  }

  #countUnsent(): void {
    if (this.#unsentCounted) return
    this.#unsentCounted = true
    if (this.index > 0) this.req.policy.budget.refund()
    this.req.policy.observer?.attemptUnsent(this.index, this.origin)
  }

  #report(error: Error | null, won: boolean): void {
    const observer = this.req.policy.observer
    if (!observer) return
    observer.attemptDone({
      index: this.index,
      origin: this.origin,
      latencyMs: this.#elapsed(),
      status: error ? null : this.status,
      error,
      bytes: this.bytes,
      won,
      sent: this.sent,
    })
    observer.attemptSettled(this.index, this.origin)
  }

  #elapsed(): number {
    return this.req.policy.now() - this.launchedAt
  }
}
