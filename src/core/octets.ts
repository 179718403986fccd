/**
 * A size in octets as a flag gives it: a whole number, or one with a
 * binary unit (64KiB, 4MiB; KB and MB are read as KiB and MiB, as gRPC's
 * and nghttp2's documentation use them).
 */
import { UsageError } from './errors.js'

const UNITS: Record<string, number> = { '': 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2 }

export function parseOctets(raw: string, flag: string): number {
  const m = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(raw)
  const unit = m === null ? undefined : UNITS[m[2]!.toLowerCase()]
  const n = m === null || unit === undefined ? Number.NaN : Number(m[1]) * unit
  if (!Number.isSafeInteger(n) || n <= 0) throw new UsageError(`invalid ${flag} "${raw}" (expected a size: 65536, 64KiB, 4MiB)`)
  return n
}
