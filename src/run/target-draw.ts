/**
 * Which target of a mix a request sends (--targets): drawn by weight with
 * the run's seeded randomness, or, in the warm-up, by a seeded shuffle of
 * blocks, so that every target is measured however small its weight.
 */
import { shuffledBlocks } from './lane.js'
import type { TargetDraw } from './run-plan.js'

export function targetDraw(targets: TargetDraw, random: () => number): () => number {
  const count = targets.weights.length
  if (count === 1) return () => 0
  return targets.draw === 'blocks' ? shuffledBlocks(count, random) : weightedDraw(targets.weights, random)
}

/** Index i with probability weights[i] / their sum. */
export function weightedDraw(weights: readonly number[], random: () => number): () => number {
  const bounds: number[] = []
  let total = 0
  for (const w of weights) {
    total += w
    bounds.push(total)
  }
  return () => {
    const x = random() * total
    let lo = 0
    let hi = bounds.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (x < bounds[mid]!) hi = mid
      else lo = mid + 1
    }
    return lo
  }
}
