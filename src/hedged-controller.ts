/**
 * The controller the caller of a hedged request holds. Pausing and resuming
 * act on the winning attempt; aborting stops every attempt.
 */
import type { Dispatcher } from 'undici'
import type { HedgedRequest } from './hedged-request.js'

export class HedgedController implements Dispatcher.DispatchController {
  #aborted = false
  #reason: Error | null = null

  constructor(private readonly req: HedgedRequest) {}

  get aborted(): boolean {
    return this.#aborted
  }

  get paused(): boolean {
    return this.req.winner?.controller?.paused ?? false
  }

  get reason(): Error | null {
    return this.#reason
  }

  abort(reason: Error): void {
    if (this.#aborted) return
    this.#aborted = true
    this.#reason = reason
    this.req.abortAll(reason)
  }

  pause(): void {
    this.req.winner?.controller?.pause()
  }

  resume(): void {
    this.req.winner?.controller?.resume()
  }
}
