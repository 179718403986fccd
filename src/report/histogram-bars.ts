/**
 * hey's "Response time histogram": ten equal-width buckets from the fastest
 * to the slowest request, each labelled with its upper bound, counted from
 * the HDR histogram's recorded values (so a saved run re-renders the same).
 */
import { JsHistogram } from 'hdr-histogram-js'
import { tryDecodeHistogram } from '../stats/histogram.js'

interface Bucket {
  /** Upper bound of the bucket, ms. */
  markMs: number
  count: number
}

const BUCKETS = 10

/** Recorded values as [microseconds, count], lowest first; null when the saved histogram cannot be decoded. */
function recordedValues(base64: string): Array<[number, number]> | null {
  const h = tryDecodeHistogram(base64)
  if (h === null) return null
  // Our histograms are never WebAssembly ones (histogram.ts builds them with
  // useWebAssembly: false), so the JS iterator is available.
  if (!(h instanceof JsHistogram)) return []
  const out: Array<[number, number]> = []
  const it = h.recordedValuesIterator
  it.reset()
  while (it.hasNext()) {
    const v = it.next()
    // The lowest equivalent value, so the fastest request lands in the first bucket as in hey.
    out.push([h.lowestEquivalentValue(v.valueIteratedTo), v.countAddedInThisIterationStep])
  }
  return out
}

/**
 * hey's buckets: marks at fastest + i * (slowest - fastest) / 10, i = 0..10;
 * one bucket when every request took the same time (hey prints eleven equal
 * labels then, ten of them empty).
 */
export function histogramBuckets(base64: string, fastestMs: number, slowestMs: number): Bucket[] | null {
  const values = recordedValues(base64)
  if (values === null) return null
  const width = (slowestMs - fastestMs) / BUCKETS
  const marks = width > 0 ? BUCKETS + 1 : 1
  const buckets = Array.from({ length: marks }, (_, i): Bucket => ({ markMs: fastestMs + width * i, count: 0 }))
  for (const [us, count] of values) {
    const ms = us / 1000
    // Clamp: HDR's value resolution can put a value a hair outside [fastest, slowest].
    const index = width > 0 ? Math.min(BUCKETS, Math.max(0, Math.ceil((ms - fastestMs) / width))) : 0
    buckets[index]!.count += count
  }
  return buckets
}

/**
 * Bucket labels precise enough to differ: one unit for all (s, ms or µs, by
 * the slowest) and as many decimals as one bucket's width needs, so a spread
 * of 1.450-1.462 s reads 1.450 s, 1.451 s, ... rather than ten "1.45 s".
 */
export function bucketLabels(buckets: Bucket[]): string[] {
  const marks = buckets.map((b) => b.markMs)
  const slowest = Math.max(...marks)
  const width = marks.length > 1 ? (slowest - Math.min(...marks)) / (marks.length - 1) : 0
  const [unit, perMs, minDecimals] = slowest >= 1000 ? ['s', 1 / 1000, 2] : slowest >= 1 ? ['ms', 1, slowest < 10 ? 2 : 1] : ['µs', 1000, 0]
  const needed = width > 0 ? Math.ceil(-Math.log10(width * perMs)) : 0
  const decimals = Math.min(6, Math.max(minDecimals, needed))
  return marks.map((ms) => `${(ms * perMs).toFixed(decimals)} ${unit}`)
}

/** One bar per bucket, the largest 40 wide, as hey draws them. */
export function histogramBars(buckets: Bucket[], barChar = '■'): string[] {
  const most = Math.max(1, ...buckets.map((b) => b.count))
  const labels = bucketLabels(buckets)
  const counts = buckets.map((b) => `[${b.count}]`)
  const labelWidth = Math.max(...labels.map((l) => l.length))
  const countWidth = Math.max(...counts.map((c) => c.length))
  return buckets.map((b, i) => {
    const bar = barChar.repeat(Math.round((b.count * 40) / most))
    return `${labels[i]!.padStart(labelWidth)} ${counts[i]!.padEnd(countWidth)} |${bar}`
  })
}
