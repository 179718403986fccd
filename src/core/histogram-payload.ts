/**
 * A saved HdrHistogram (the compressed base64 V2 form hdr-histogram-js
 * writes) inflated with bounds. A result file is input like any other: a
 * payload of a few kilobytes can inflate to gigabytes (zlib's ratio is
 * ~1000:1), and a run of zeros in the counts can claim 2^50 buckets that the
 * decoder would then walk one by one. Every histogram hedgebench reads is
 * inflated here, with an output limit, and its counts checked before the
 * library decodes them.
 *
 * Why 1 MiB: hedgebench's histograms (3 significant digits, microseconds)
 * have 2,048 buckets per power of two, ~45,000 to reach 2^53 us; at the
 * 9 bytes a count can take, the largest is ~400 KB inflated. Real ones are
 * a few kilobytes.
 */
import { inflateSync } from 'node:zlib'

export const MAX_HISTOGRAM_BYTES = 1 << 20
/** Bucket indexes the counts may span: above any histogram of at most 5 significant digits up to 2^53. */
export const MAX_HISTOGRAM_BUCKETS = 1 << 23

const COMPRESSED_COOKIE = 0x1c849304
const COOKIE = 0x1c849303
const HEADER_BYTES = 40

/** What is wrong with a payload; `bound` when it is over a limit (refused when read), not when it is merely damaged. */
export class HistogramPayloadError extends Error {
  constructor(
    message: string,
    readonly bound: boolean,
  ) {
    super(message)
  }
}

/** The inflated V2 encoding, its counts checked to stay within MAX_HISTOGRAM_BUCKETS; throws HistogramPayloadError. */
export function inflateHistogram(base64: string): Buffer {
  const bytes = Buffer.from(base64.trim(), 'base64')
  if (bytes.length < 8 || (bytes.readInt32BE(0) & ~0xf0) !== COMPRESSED_COOKIE) throw new HistogramPayloadError('not a compressed HdrHistogram', false)
  let raw: Buffer
  try {
    raw = inflateSync(bytes.subarray(8, 8 + bytes.readUInt32BE(4)), { maxOutputLength: MAX_HISTOGRAM_BYTES })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw new HistogramPayloadError(`inflates to more than ${MAX_HISTOGRAM_BYTES} bytes`, true)
    throw new HistogramPayloadError('not a compressed HdrHistogram (zlib cannot inflate it)', false)
  }
  checkCounts(raw)
  return raw
}

/** The problem a bound finds with a payload, or null (a damaged payload is no bound's business: its reader says it cannot be read). */
export function histogramBoundProblem(base64: string): string | null {
  try {
    inflateHistogram(base64)
    return null
  } catch (err) {
    return err instanceof HistogramPayloadError && err.bound ? err.message : null
  }
}

/** The header the decoder trusts, and the counts' zero runs summed: the decoder walks every bucket index they reach. */
function checkCounts(raw: Buffer): void {
  if (raw.length < HEADER_BYTES || (raw.readInt32BE(0) & ~0xf0) !== COOKIE) throw new HistogramPayloadError('not an HdrHistogram V2 encoding', false)
  const digits = raw.readInt32BE(12)
  if (digits < 0 || digits > 5) throw new HistogramPayloadError(`has ${digits} significant digits (at most 5)`, true)
  const end = HEADER_BYTES + raw.readInt32BE(4)
  if (end > raw.length || end < HEADER_BYTES) throw new HistogramPayloadError('is cut short', false)
  let buckets = 0
  for (let at = HEADER_BYTES; at < end; ) {
    let value = 0
    let scale = 1
    let byte: number
    do {
      byte = raw[at++] ?? 0
      value += (byte & 0x7f) * scale
      scale *= 128
    } while (byte & 0x80 && scale <= 2 ** 56)
    // ZigZag: odd values are negative, a run of that many zero buckets.
    buckets += value % 2 === 0 ? 1 : (value + 1) / 2
    if (buckets > MAX_HISTOGRAM_BUCKETS) throw new HistogramPayloadError(`has counts over more than ${MAX_HISTOGRAM_BUCKETS} buckets`, true)
  }
}
