/** Milliseconds to three decimals (the microsecond): what results store, so that JSON stays readable and merges add up the same way everywhere. */
export function round3(x: number): number {
  return Math.round(x * 1000) / 1000
}
