/**
 * A result leaving a pod without a shared volume: printed to stdout as
 * framed lines that `kubectl logs --prefix` can interleave and prefix, and
 * `hedgebench merge --from-logs -` reassembles. Each line names its run,
 * its shard and its place (chunk k of n), and carries checksums of its own
 * chunk and of the whole payload; the payload is the result's JSON,
 * gzipped, in base64 chunks short enough (8 KiB a line) that no container
 * runtime splits them.
 *
 *   HBFRAME1 <run id> <shard I/N> <k/n> <sha256 of payload, 16 hex> <sha256 of chunk, 8 hex> <base64>
 */
import { createHash } from 'node:crypto'
import { gunzipSync, gzipSync } from 'node:zlib'
import { UsageError } from '../core/errors.js'
import { parseResult, renderJson } from './result-json.js'
import type { RunResult } from './run-result.js'

const MAGIC = 'HBFRAME1'
/** Whole line, prefix and newline included, stays under 8 KiB. */
export const MAX_LINE_BYTES = 8192
const CHUNK_CHARS = MAX_LINE_BYTES - 256 // room for the header; a multiple of 4

const FRAME_RE = /HBFRAME1 (\S+) (\d+)\/(\d+) (\d+)\/(\d+) ([0-9a-f]{16}) ([0-9a-f]{8}) ([A-Za-z0-9+/=]+)\s*$/

const sha = (text: string, chars: number): string => createHash('sha256').update(text).digest('hex').slice(0, chars)

/** The framed lines of one result (no trailing newlines). */
export function encodeFrames(result: RunResult): string[] {
  const payload = gzipSync(renderJson(result)).toString('base64')
  const total = sha(payload, 16)
  const shard = result.shard ? `${result.shard.index}/${result.shard.count}` : '0/1'
  const runId = result.runId ?? 'run'
  const n = Math.max(1, Math.ceil(payload.length / CHUNK_CHARS))
  const lines: string[] = []
  for (let k = 0; k < n; k++) {
    const chunk = payload.slice(k * CHUNK_CHARS, (k + 1) * CHUNK_CHARS)
    lines.push(`${MAGIC} ${runId} ${shard} ${k + 1}/${n} ${total} ${sha(chunk, 8)} ${chunk}`)
  }
  return lines
}

interface PendingResult {
  label: string
  n: number
  total: string
  chunks: Map<number, string>
}

/**
 * Collects frames from log lines in any order, among any other lines (the
 * text report, kubectl's "[pod/…/container] " prefixes); `results()` gives
 * each complete result once, and refuses corrupt or incomplete ones.
 */
export class FrameCollector {
  readonly #byKey = new Map<string, PendingResult>()
  lines = 0
  frames = 0

  add(line: string): void {
    this.lines++
    if (!line.includes(MAGIC)) return
    const m = FRAME_RE.exec(line)
    if (!m)
      throw new UsageError(
        `log line ${this.lines}: a ${MAGIC} frame that is cut or garbled (was the log line split? frames are ${MAX_LINE_BYTES} bytes at most)`,
      )
    const [, runId, index, count, kText, nText, total, chunkSum, chunk] = m as unknown as string[]
    const label = `run ${runId} shard ${index}/${count}`
    const k = Number(kText)
    const n = Number(nText)
    if (!(k >= 1 && k <= n)) throw new UsageError(`log line ${this.lines}: ${label}: chunk ${k} of ${n} is out of range`)
    if (sha(chunk!, 8) !== chunkSum) throw new UsageError(`log line ${this.lines}: ${label}: chunk ${k} of ${n} fails its checksum (corrupt log)`)
    const key = `${runId} ${index}/${count} ${total}`
    const part = this.#byKey.get(key) ?? { label, n, total: total!, chunks: new Map<number, string>() }
    if (part.n !== n) throw new UsageError(`log line ${this.lines}: ${label}: chunk counts disagree (${part.n} and ${n})`)
    part.chunks.set(k, chunk!) // a repeated line (the same chunk twice) is harmless
    this.#byKey.set(key, part)
    this.frames++
  }

  results(): RunResult[] {
    return [...this.#byKey.values()].map((p) => {
      if (p.chunks.size !== p.n) {
        const missing = [...Array(p.n).keys()].map((i) => i + 1).filter((k) => !p.chunks.has(k))
        throw new UsageError(
          `${p.label}: ${p.chunks.size} of ${p.n} frames (missing chunk ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}): collect with kubectl logs --tail=-1`,
        )
      }
      const payload = [...Array(p.n).keys()].map((i) => p.chunks.get(i + 1)!).join('')
      if (sha(payload, 16) !== p.total) throw new UsageError(`${p.label}: the reassembled result fails its checksum`)
      let json: string
      try {
        json = gunzipSync(Buffer.from(payload, 'base64')).toString('utf8')
      } catch {
        throw new UsageError(`${p.label}: the reassembled result is not gzip data`)
      }
      return parseResult(json, p.label)
    })
  }
}
