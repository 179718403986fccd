/**
 * The hedge budget, as gRPC's retryThrottling and Finagle's RetryBudget do
 * it: every original request deposits `ratio` of a token, every hedge spends
 * a whole one. Over a run, hedges can add at most `ratio` extra load (plus
 * the burst), however low the hedge delay is set.
 */
const EPSILON = 1e-9

export class TokenBucket {
  #tokens: number
  readonly #ratio: number
  readonly #capacity: number

  /**
   * @param ratio tokens earned per original request (budget % / 100)
   * @param burst tokens the bucket can hold (and starts with): the burst allowance
   */
  constructor(ratio: number, burst: number) {
    this.#ratio = ratio
    this.#capacity = Math.max(1, burst)
    this.#tokens = this.#capacity
  }

  /** An original request was sent: earn a fraction of a token. */
  deposit(): void {
    this.#tokens = Math.min(this.#capacity, this.#tokens + this.#ratio)
  }

  /** A hedge that never reached the wire added no load: give its token back. */
  refund(): void {
    this.#tokens = Math.min(this.#capacity, this.#tokens + 1)
  }

  /**
   * Take one token for a hedge; false when the budget is spent. Ten deposits
   * of 0.1 add up to 0.9999999999999999 in binary floating point: a token is
   * whole within EPSILON, so a 10 % budget allows a hedge per 10 originals,
   * not per 11.
   */
  trySpend(): boolean {
    if (this.#tokens < 1 - EPSILON) return false
    this.#tokens = Math.max(0, this.#tokens - 1)
    return true
  }

  get tokens(): number {
    return this.#tokens
  }
}

/** A budget that never refuses (--hedge-budget off). */
export const UNLIMITED_BUDGET = { deposit(): void {}, refund(): void {}, trySpend: (): boolean => true }

export type HedgeBudget = Pick<TokenBucket, 'deposit' | 'refund' | 'trySpend'>
