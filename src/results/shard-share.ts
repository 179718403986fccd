/**
 * A shard's exact share of the load (--shard I/N: one of N generators of one
 * run): shard I gets floor(total / N), plus one where I < total mod N, so the
 * N shares add up to what one process would have been asked for. Plain
 * arithmetic on results: the run splits its load with it, and the reports
 * read a shard's share of -n and -q back from a saved result.
 */

export interface Shard {
  /** 0-based. */
  index: number
  count: number
}

/** Shard `s`'s exact share of a whole-number total. */
export function shareOf(total: number, s: Shard): number {
  return Math.floor(total / s.count) + (s.index < total % s.count ? 1 : 0)
}

/**
 * Shard `s`'s share of a rate: the whole requests/s split like a count, and
 * a fractional part (-q 2.5) split evenly, so the shares add up to the rate.
 */
export function rateShareOf(rate: number, s: Shard): number {
  const whole = Math.floor(rate)
  return shareOf(whole, s) + (rate - whole) / s.count
}
