/** `hedgebench compare -o json`: the full Comparison (no Infinity or NaN: compare emits null instead). */
import type { Comparison } from './compare.js'

export function renderCompareJson(c: Comparison): string {
  return `${JSON.stringify(c, null, 2)}\n`
}
