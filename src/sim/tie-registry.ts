/**
 * Tied requests across the simulated replicas of one process (the 'ask many servers' article:
 * "both copies are sent at once, each tagged with the other server's
 * address, and the first server to start the work tells the other to drop
 * its copy"). The replicas share this registry instead of sending each
 * other messages: the first copy to start claims the tie and drops its
 * twin from whichever queue holds it; a twin arriving later finds the
 * claim and is dropped before it starts.
 */

/** Ties remembered at most: a twin that never arrives must not grow memory without bound. */
const MAX_TIES = 100_000

export class TieRegistry {
  /** Ties claimed whose twin has not been seen yet, oldest first. */
  readonly #claimed = new Set<string>()

  constructor(private readonly dropQueuedTwin: (tie: string) => boolean) {}

  /** Its twin already started, so this copy must not; both copies are then seen and the tie forgotten. */
  twinStarted(tie: string): boolean {
    return this.#claimed.delete(tie)
  }

  /** True when this copy may start (it is the first); false when its twin already started. */
  claim(tie: string): boolean {
    if (this.twinStarted(tie)) return false
    if (this.dropQueuedTwin(tie)) return true // the twin was waiting: dropped, nothing more to remember
    this.#claimed.add(tie)
    if (this.#claimed.size > MAX_TIES) this.#claimed.delete(this.#claimed.values().next().value!)
    return true
  }
}
