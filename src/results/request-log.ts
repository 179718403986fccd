/**
 * The per-request log (--csv-requests): one CSV row per logical request,
 * streamed to disk as the run goes (vegeta's Encoder, not its Reporter).
 * Memory stays bounded: csv-stringify's object-mode buffer holds a few
 * rows, and when the file cannot keep up `write` returns false so the
 * engine waits for 'drain' instead of queueing the whole run.
 */
import { createWriteStream } from 'node:fs'
import type { WriteStream } from 'node:fs'
import { pipeline } from 'node:stream/promises'
import { stringify } from 'csv-stringify'
import type { Stringifier } from 'csv-stringify'
import { UsageError } from '../core/errors.js'
import { redactUrl } from '../core/redact.js'
import type { RequestRecord, RequestSink } from '../results/request-record.js'

export const REQUEST_LOG_COLUMNS = ['phase', 'seq', 'start_ms', 'latency_ms', 'status', 'error', 'replica', 'attempts', 'winner', 'hedge_fired_ms'] as const

export interface RequestLog extends RequestSink {
  /** Ends the stream and resolves once every row is on disk (also after an interruption). */
  close(): Promise<void>
}

/** Opens (truncates) `path` and returns a sink writing one CSV row per record. */
export async function createRequestLog(path: string): Promise<RequestLog> {
  const file = await openForWrite(path)
  return new CsvRequestLog(file)
}

function openForWrite(path: string): Promise<WriteStream> {
  return new Promise((resolve, reject) => {
    const file = createWriteStream(path, { flags: 'w' })
    file.once('open', () => {
      file.off('error', reject)
      resolve(file)
    })
    // Surface a bad path now, as a usage error, rather than mid-run.
    file.once('error', (err: NodeJS.ErrnoException) => reject(new UsageError(`cannot write request log "${path}": ${err.code ?? err.message}`)))
  })
}

class CsvRequestLog implements RequestLog {
  readonly #csv: Stringifier
  readonly #done: Promise<void>
  #error: Error | null = null
  #closed = false

  constructor(file: WriteStream) {
    this.#csv = stringify({ header: true, columns: [...REQUEST_LOG_COLUMNS] })
    // Caught here so a disk error never becomes an unhandled rejection; close() reports it.
    this.#done = pipeline(this.#csv, file).catch((err: Error) => {
      this.#error = err
    })
  }

  write(record: RequestRecord): boolean {
    // After close or a write error, rows are dropped; close() reports the error.
    if (this.#closed || this.#error !== null || this.#csv.destroyed) return true
    return this.#csv.write(toRow(record))
  }

  waitForDrain(): Promise<void> {
    if (!this.#csv.writableNeedDrain || this.#csv.destroyed) return Promise.resolve()
    return new Promise((resolve) => {
      const done = (): void => {
        this.#csv.off('drain', done)
        this.#csv.off('close', done)
        resolve()
      }
      // 'close' too: a stream torn down by an error never drains, and the engine must not hang.
      this.#csv.on('drain', done)
      this.#csv.on('close', done)
    })
  }

  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true
      this.#csv.end()
    }
    await this.#done
    if (this.#error !== null) throw new Error(`request log: ${this.#error.message}`)
  }
}

const ms3 = (ms: number): string => ms.toFixed(3)

function toRow(r: RequestRecord): Record<(typeof REQUEST_LOG_COLUMNS)[number], string | number> {
  return {
    phase: r.phase,
    seq: r.seq,
    start_ms: ms3(r.startMs),
    latency_ms: ms3(r.latencyMs),
    status: r.status ?? '',
    error: r.error ?? '',
    replica: redactUrl(r.replica),
    attempts: r.attempts,
    winner: r.winner,
    hedge_fired_ms: r.hedgeFiredMs === null ? '' : ms3(r.hedgeFiredMs),
  }
}
