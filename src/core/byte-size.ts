import { UsageError } from './errors.js'

/** Binary units as gRPC's limits are given (4 MiB), decimal ones as disks are; a bare number is bytes. */
const UNIT_BYTES: Record<string, number> = { b: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, kb: 1000, mb: 1000 ** 2, gb: 1000 ** 3 }
const SIZE_RE = /^(\d+(?:\.\d+)?|\.\d+)\s*([kmg]i?b|b)?$/i

/**
 * "4MiB", "512KiB", "1.5MB", "4194304" in bytes, at most `max`. Throws
 * UsageError naming the flag and the bad value (not a size, not a whole
 * number of bytes, over `max`).
 */
export function parseByteSize(text: string | number, flag: string, max: number): number {
  const raw = String(text).trim()
  const match = SIZE_RE.exec(raw)
  if (!match) throw new UsageError(`invalid size for ${flag}: "${raw}" (use bytes, or a number with KiB, MiB, GiB, KB, MB or GB, e.g. 4MiB)`)
  const bytes = Number(match[1]) * UNIT_BYTES[(match[2] ?? 'b').toLowerCase()]!
  if (!Number.isInteger(bytes)) throw new UsageError(`invalid size for ${flag}: "${raw}" is not a whole number of bytes`)
  if (bytes > max) throw new UsageError(`invalid size for ${flag}: "${raw}" is over ${max} bytes`)
  return bytes
}
