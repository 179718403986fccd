/** The per-request record (--csv-requests) and where the engine hands it: a result, one row per logical request. */
import type { PhaseName } from './run-result.js'

/** One row of the per-request log (--csv-requests). */
export interface RequestRecord {
  phase: PhaseName
  /** A mix (--targets): the target the request sent (`GET /a`, `package.Service/Method`). */
  target?: string
  seq: number
  /** Offset from the run start, ms. */
  startMs: number
  latencyMs: number
  status: number | null
  error: string | null
  replica: string
  attempts: number
  winner: string
  hedgeFiredMs: number | null
}

/** Where per-request rows go; `write` returning false asks the engine to wait for drain. */
export interface RequestSink {
  write(record: RequestRecord): boolean
  waitForDrain(): Promise<void>
}
