/**
 * Which replica an attempt goes to. Originals rotate round-robin (hey-style
 * spreading) over the replicas that are not ejected; a hedge goes to a
 * replica the same request has not tried yet, so the copies take
 * independent paths and a hedge sent because an attempt failed does not go
 * back to the replica that failed it (Envoy's previous-hosts predicate).
 */
import type { ReplicaGate } from './replica-health.js'

export class RoundRobin {
  #next: number
  /** @param first the replica to start at (a shard's own, so that shards do not all start at the first) */
  constructor(
    readonly replicas: readonly string[],
    readonly health: ReplicaGate | null = null,
    first = 0,
  ) {
    this.#next = first % Math.max(1, replicas.length)
  }

  next(): string {
    const n = this.replicas.length
    for (let tried = 0; tried < n; tried++) {
      const replica = this.replicas[this.#next]!
      this.#next = (this.#next + 1) % n
      if (!this.health || this.health.isAvailable(replica)) return replica
    }
    return this.replicas[this.#next]! // unreachable while health keeps one replica in
  }
}

/**
 * A random replica that is not ejected and that the request has not tried
 * (`tried`: every attempt's replica, finished or not; by default `busy`);
 * if it tried them all, one not in `busy` (no attempt of it in flight
 * there); if every one is busy, any available one but the most recently
 * used; with one replica, that one.
 */
export function pickHedgeTarget(
  replicas: readonly string[],
  busy: readonly string[],
  random: () => number,
  health: ReplicaGate | null = null,
  tried: readonly string[] = busy,
): string {
  if (replicas.length === 1) return replicas[0]!
  const available: readonly string[] = health ? replicas.filter((r) => health.isAvailable(r)) : replicas
  let free: readonly string[] = available.filter((r) => !tried.includes(r))
  if (free.length === 0) free = available.filter((r) => !busy.includes(r))
  if (free.length === 0) free = available.filter((r) => r !== busy[busy.length - 1])
  if (free.length === 0) free = available
  return free[Math.floor(random() * free.length)]!
}
