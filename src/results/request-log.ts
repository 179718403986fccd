/**
 * The per-request log (--csv-requests): one CSV row per logical request,
 * streamed to disk as the run goes (vegeta's Encoder, not its Reporter).
 * Memory stays bounded: csv-stringify's object-mode buffer holds a few
 * rows, and when the file cannot keep up `write` returns false so the
 * engine waits for 'drain' instead of queueing the whole run.
 *
 * The rows go to a temporary file beside the path, renamed onto it when the
 * log is closed: two runs given the same path each leave a whole file (the
 * last one to finish wins), never one file with both runs' rows spliced, and
 * a run that fails to write (a full disk) leaves what was there before. A
 * path that is not a regular file (/dev/stdout, a named pipe) is written in
 * place: there is nothing to rename onto.
 */
import { createWriteStream } from 'node:fs'
import type { WriteStream } from 'node:fs'
import { open, rename, unlink } from 'node:fs/promises'
import { pipeline } from 'node:stream/promises'
import { stringify } from 'csv-stringify'
import type { Stringifier } from 'csv-stringify'
import { CSV_SAFETY } from '../core/csv-safety.js'
import { UsageError } from '../core/errors.js'
import { redactUrl } from '../core/redact.js'
import { statusKey } from '../core/status.js'
import { isSpecialFile, tempPathBeside } from '../core/temp-file.js'
import type { RequestRecord, RequestSink } from '../results/request-record.js'

export const REQUEST_LOG_COLUMNS = ['phase', 'seq', 'start_ms', 'latency_ms', 'status', 'error', 'replica', 'attempts', 'winner', 'hedge_fired_ms'] as const

/** A mix's log (--targets) has a `target` column after `phase`: the target each request sent. */
const TARGET_COLUMN = 'target'

export interface RequestLog extends RequestSink {
  /** Ends the stream and resolves once every row is on disk under its name (also after an interruption); rejects when the rows could not be written. */
  close(): Promise<void>
  /** Ends the stream and removes what was written: the run measured nothing. */
  discard(): Promise<void>
}

/** Opens a log for `path` (replaced when the log is closed) and returns a sink writing one CSV row per record; `targets`: a mix's, with its target column. */
export async function createRequestLog(path: string, o: { targets?: boolean } = {}): Promise<RequestLog> {
  const temp = (await isSpecialFile(path)) ? null : tempPathBeside(path)
  const file = await openForWrite(path, temp)
  const [phase, ...rest] = REQUEST_LOG_COLUMNS
  return new CsvRequestLog(file, path, temp, o.targets ? [phase, TARGET_COLUMN, ...rest] : [...REQUEST_LOG_COLUMNS])
}

function openForWrite(path: string, temp: string | null): Promise<WriteStream> {
  return new Promise((resolve, reject) => {
    // Results are not for other users of a shared runner: 0600, as the saved files.
    const file = temp === null ? createWriteStream(path, { flags: 'w' }) : createWriteStream(temp, { flags: 'wx', mode: 0o600 })
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
  readonly #path: string
  readonly #temp: string | null

  constructor(file: WriteStream, path: string, temp: string | null, columns: string[]) {
    this.#path = path
    this.#temp = temp
    this.#csv = stringify({ header: true, columns, ...CSV_SAFETY })
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

  #closing: Promise<void> | null = null

  close(): Promise<void> {
    this.#closing ??= this.#closeOnce()
    return this.#closing
  }

  async #closeOnce(): Promise<void> {
    await this.#end()
    if (this.#error === null && this.#temp !== null) await this.#commit(this.#temp).catch((err: Error) => (this.#error = err))
    if (this.#error === null) return
    await this.#removeTemp()
    const code = (this.#error as NodeJS.ErrnoException).code
    throw new Error(`request log "${this.#path}" not written: ${code ?? this.#error.message}`)
  }

  async discard(): Promise<void> {
    this.#closing ??= this.#end().then(() => this.#removeTemp())
    await this.#closing.catch(() => undefined)
  }

  async #end(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true
      this.#csv.end()
    }
    await this.#done
  }

  /** On disk, then under its name. */
  async #commit(temp: string): Promise<void> {
    const handle = await open(temp, 'r+')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, this.#path)
  }

  async #removeTemp(): Promise<void> {
    if (this.#temp !== null) await unlink(this.#temp).catch(() => undefined)
  }
}

const ms3 = (ms: number): string => ms.toFixed(3)

function toRow(r: RequestRecord): Record<(typeof REQUEST_LOG_COLUMNS)[number] | typeof TARGET_COLUMN, string | number> {
  return {
    phase: r.phase,
    target: r.target ?? '',
    seq: r.seq,
    start_ms: ms3(r.startMs),
    latency_ms: ms3(r.latencyMs),
    // A gRPC code by its name (UNAVAILABLE), as the text report and the JSON name it; an HTTP status as its number.
    status: r.status === null ? '' : statusKey(r.status),
    error: r.error ?? '',
    replica: redactUrl(r.replica),
    attempts: r.attempts,
    winner: r.winner,
    hedge_fired_ms: r.hedgeFiredMs === null ? '' : ms3(r.hedgeFiredMs),
  }
}
