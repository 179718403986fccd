/**
 * Which replica an attempt goes to. Originals rotate round-robin (hey-style
 * spreading); a hedge goes to a replica that has no attempt of the same
 * request in flight, so the copies take independent paths.
 */
export class RoundRobin {
  #next = 0
  constructor(readonly replicas: readonly string[]) {}

  next(): string {
    const replica = this.replicas[this.#next]!
    this.#next = (this.#next + 1) % this.replicas.length
    return replica
  }
}

/**
 * A random replica not in `busy`; if every replica is busy, any replica but
 * the most recently used one; with one replica, that one.
 */
export function pickHedgeTarget(replicas: readonly string[], busy: readonly string[], random: () => number): string {
  if (replicas.length === 1) return replicas[0]!
  let free = replicas.filter((r) => !busy.includes(r))
  if (free.length === 0) free = replicas.filter((r) => r !== busy[busy.length - 1])
  return free[Math.floor(random() * free.length)]!
}
