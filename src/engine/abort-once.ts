/**
 * The part of undici's DispatchController that every controller here shares:
 * the first abort wins, is remembered, and is acted on once. What "acting
 * on it" means (abort one attempt's connection, or every attempt of a
 * hedged request) and what pausing means is the subclass's.
 */
import type { Dispatcher } from 'undici'

export abstract class AbortOnce implements Dispatcher.DispatchController {
  #aborted = false
  #reason: Error | null = null

  get aborted(): boolean {
    return this.#aborted
  }

  get reason(): Error | null {
    return this.#reason
  }

  abort(reason: Error): void {
    if (this.#aborted) return
    this.#aborted = true
    this.#reason = reason
    this.onAbort(reason)
  }

  /** Called once, at the first abort. */
  protected abstract onAbort(reason: Error): void
  abstract get paused(): boolean
  abstract pause(): void
  abstract resume(): void
}
