/**
 * Seeded randomness. Every random choice hedgebench makes (replica picks,
 * interleaving, simulated stalls) goes through one of these, so a test or a
 * demo can be replayed exactly.
 */

/** mulberry32: small, fast, good enough for simulation; returns [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return function next(): number {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A seed from the clock, for runs where the user gave none. */
export function randomSeed(): number {
  return (Date.now() ^ (process.pid << 16)) >>> 0
}
