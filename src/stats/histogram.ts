/**
 * Every HDR histogram in hedgebench is built here (as autocannon keeps its
 * setup in histUtil.js): values are integer microseconds, 3 significant
 * digits, auto-resizing so a 30 s stall cannot overflow it.
 */
import * as hdr from 'hdr-histogram-js'
import { inflateHistogram } from '../core/histogram-payload.js'
import type { LatencySummary } from '../results/run-result.js'

export type Histogram = hdr.Histogram

export function createHistogram(): Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3, autoResize: true, useWebAssembly: false })
}

/** The JS histogram's own fields and steps (hdr-histogram-js JsHistogram), for the fast path below. */
interface JsHistogramParts {
  subBucketHalfCountMagnitude: number
  subBucketHalfCount: number
  unitMagnitude: number
  countsArrayLength: number
  incrementCountAtIndex(index: number): void
  updateMinAndMax(value: number): void
  incrementTotalCount(): void
}

/**
 * Records a latency given in milliseconds (float) as integer microseconds.
 *
 * Several records per request: the bucket index is computed here with
 * integer operations (clz32 and a shift) instead of the library's
 * Math.log2/Math.pow, which made recording a fifth of the engine's own
 * per-request cost. Same index, same steps (count, min/max, total) as
 * JsHistogram.recordSingleValue; anything out of range (a resize) goes
 * through the library.
 */
export function recordMs(h: Histogram, ms: number): void {
  const value = Math.max(1, Math.round(ms * 1000))
  const j = h as unknown as JsHistogramParts
  if (value < 0x40000000 && j.unitMagnitude === 0) {
    const magnitude = j.subBucketHalfCountMagnitude
    const bucket = Math.max(31 - Math.clz32(value) - magnitude, 0)
    const index = ((bucket + 1) << magnitude) + (value >>> bucket) - j.subBucketHalfCount
    if (index < j.countsArrayLength) {
      j.incrementCountAtIndex(index)
      j.updateMinAndMax(value)
      j.incrementTotalCount()
      return
    }
  }
  h.recordValue(value)
}

export function encodeHistogram(h: Histogram): string {
  return hdr.encodeIntoCompressedBase64(h)
}

/** hdr-histogram-js's decoder of the inflated form: JsHistogram.decode, added by its encoding module, whose types its index leaves out. */
const JsDecoder = hdr.JsHistogram as unknown as { decode(data: Uint8Array, bitBucketSize: 32, minBarForHighestTrackableValue: number): Histogram }

/** A saved histogram as the library reads it, inflated with bounds (core/histogram-payload.ts), never by the library's unbounded inflate. */
function decodeSaved(base64: string): Histogram {
  return JsDecoder.decode(inflateHistogram(base64), 32, 0)
}

export function decodeHistogram(base64: string): Histogram {
  const decoded = decodeSaved(base64)
  // Decoded histograms are not auto-resizing; re-home them so add() of a
  // histogram with a larger range works when merging.
  const h = createHistogram()
  h.add(decoded)
  return h
}

/** A saved histogram, or null when it is missing or cannot be decoded (the figures still render without it). */
export function tryDecodeHistogram(base64: string | undefined): Histogram | null {
  try {
    return base64 ? decodeHistogram(base64) : null
  } catch {
    return null
  }
}

export function mergeHistograms(histograms: Histogram[]): Histogram {
  const total = createHistogram()
  for (const h of histograms) total.add(h)
  return total
}

const usToMs = (us: number): number => Math.round(us) / 1000

/** Value at a percentile (0-100) in milliseconds; 0 for an empty histogram. */
export function percentileMs(h: Histogram, percentile: number): number {
  return h.totalCount === 0 ? 0 : usToMs(h.getValueAtPercentile(percentile))
}

interface JsHistogramWalk {
  countsArrayLength: number
  getCountAtIndex(index: number): number
  valueFromIndex(index: number): number
  lowestEquivalentValue(value: number): number
  highestEquivalentValue(value: number): number
}

/** hdr-histogram-js's ulp: getValueAtPercentile rounds a count up with it. */
const ulp = (x: number): number => 2 ** (Math.floor(Math.log2(x)) - 52)

/**
 * percentileMs for many percentiles in one walk of the counts: the same
 * values getValueAtPercentile gives (its count rounding, the lowest
 * equivalent value at 0, the highest elsewhere), where asking for each
 * walks the counts from the start every time (a chart's 2,000 quantiles
 * took 100 ms a page).
 */
export function percentilesMs(h: Histogram, percentiles: readonly number[]): number[] {
  const out = new Array<number>(percentiles.length).fill(0)
  if (h.totalCount === 0 || percentiles.length === 0) return out
  const j = h as unknown as JsHistogramWalk
  const wanted = percentiles.map((p, at) => {
    const fp = (Math.min(p, 100) / 100) * h.totalCount
    return { at, p, count: Math.max(Math.ceil(fp - ulp(fp)), 1) }
  })
  wanted.sort((a, b) => a.count - b.count)
  let next = 0
  let total = 0
  for (let i = 0; i < j.countsArrayLength && next < wanted.length; i++) {
    total += j.getCountAtIndex(i)
    while (next < wanted.length && total >= wanted[next]!.count) {
      const w = wanted[next++]!
      const value = j.valueFromIndex(i)
      out[w.at] = usToMs(w.p === 0 ? j.lowestEquivalentValue(value) : j.highestEquivalentValue(value))
    }
  }
  return out
}

export function summarize(h: Histogram): LatencySummary {
  const empty = h.totalCount === 0
  // A percentile reads the top of its HDR bucket; never report more than the exact max.
  const max = empty ? 0 : h.maxValue
  const at = (p: number): number => (empty ? 0 : usToMs(Math.min(max, h.getValueAtPercentile(p))))
  return {
    min: empty ? 0 : usToMs(h.minNonZeroValue),
    mean: empty ? 0 : Math.round(h.mean) / 1000,
    stddev: empty ? 0 : Math.round(h.stdDeviation) / 1000,
    p10: at(10),
    p25: at(25),
    p50: at(50),
    p75: at(75),
    p90: at(90),
    p95: at(95),
    p99: at(99),
    'p99.9': at(99.9),
    'p99.99': at(99.99),
    max: usToMs(max),
  }
}

/** Significant digits a saved histogram was recorded with (histograms of different precision must not be added). */
export function histogramPrecision(base64: string): number {
  return decodeSaved(base64).numberOfSignificantValueDigits
}

/** Each recorded value (ms, the lowest of its HDR bucket) with its count, in order: a histogram handed on to another format (watch's metrics). */
export function eachRecordedMs(h: Histogram, visit: (ms: number, count: number) => void): void {
  if (h.totalCount === 0) return
  const j = h as unknown as JsHistogramWalk
  for (let i = 0; i < j.countsArrayLength; i++) {
    const count = j.getCountAtIndex(i)
    if (count > 0) visit(usToMs(j.valueFromIndex(i)), count)
  }
}
