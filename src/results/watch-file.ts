/**
 * A saved watch (`watch-<start>-<label>.json`, results/watch-result.ts)
 * read back, so that `report` renders what a watch printed at its end, or
 * what a killed watch had kept to its last second. Read as a saved run is
 * (result-json.ts): the nesting bounded, then this schema, its whole-window
 * `run` through the run's own path; the text is kept as read, for -o json.
 * The shape is the one watch-result.ts declares: the type check below
 * fails to compile when the two part.
 */
import { UsageError } from '../core/errors.js'
import { printableDeep, printableJson } from '../core/printable.js'
import { bool, count, list, loose, num, oneOf, problemWith, record, str, v, type Infer } from '../core/schema.js'
import { type Json, resultFromValue } from './result-json.js'
import { HistogramSchema } from './run-result.js'
import { WATCH_SCHEMA, type WatchResult } from './watch-result.js'

const c = count()
const opt = v.optional
const ms = v.nullable(num(0, Infinity, 'must be a number >= 0 or null'))
const seconds = num(0)

const counts = {
  requests: c,
  errors: c,
  slow: c,
  attempts: c,
  hedges: c,
  hedgeWins: c,
  cancelled: c,
  budgetDenied: c,
}

const LaneSecondSchema = loose({ ...counts, t: seconds, p50Ms: ms, p99Ms: ms, delayMs: ms, errorKinds: opt(record(c)) })

const SegmentLaneSchema = loose({ ...counts, delaySumMs: num(0), delaySeconds: c, errorKinds: record(c), histogram: HistogramSchema })

const ChangeSchema = loose({
  metric: oneOf(['p99', 'slow', 'error_rate']),
  atS: seconds,
  intervalS: v.tuple([seconds, seconds], 'must be [from, to]'),
  detectedAtS: seconds,
  direction: oneOf(['up', 'down']),
  before: num(),
  after: num(),
  blockS: opt(seconds),
  lane: oneOf(['plain', 'hedged']),
})

const WatchFileSchema = loose({
  schema: v.literal(WATCH_SCHEMA, `must be "${WATCH_SCHEMA}"`),
  version: str(),
  label: str(),
  startedAt: str(),
  finishedAt: v.nullable(str('must be a string or null')),
  partial: bool(),
  urls: list(str('must be an array of strings'), 'must be an array of strings'),
  rate: num(Number.MIN_VALUE),
  slowMs: num(0),
  hedgeDelay: loose({
    percentile: num(0, 100),
    window: v.union([loose({ requests: c }), loose({ ms: num(0) })], 'must be {requests} or {ms}'),
    minMs: num(0),
    maxMs: num(0),
  }),
  seconds: list(loose({ t: seconds, plain: LaneSecondSchema, hedged: LaneSecondSchema })),
  sentUntilS: opt(seconds),
  marks: list(loose({ atS: seconds, name: str(), source: oneOf(['key', 'signal', 'mark-at', 'http', 'api']) })),
  segments: list(loose({ name: str(), fromS: seconds, toS: seconds, lanes: loose({ plain: SegmentLaneSchema, hedged: SegmentLaneSchema }) })),
  changes: list(ChangeSchema),
  /** Checked by the run's own path (result-json.ts), its upgrade included. */
  run: opt(v.unknown()),
  /** The gates the watch applied: their conditions, applied again when the file is rendered. */
  failIf: opt(loose({ checks: list(loose({ condition: loose({ text: str() }) })) })),
})

// Compiles only while the schema and watch-result.ts's interfaces describe the same file.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const sameShape: Same<Omit<Infer<typeof WatchFileSchema>, 'run' | 'failIf'>, Omit<WatchResult, 'run'>> = true
void sameShape

/** A saved watch as read: the watch (with its run when it ended), the --fail-if conditions it was judged by, and the file's text. */
export interface SavedWatchFile {
  watch: WatchResult
  failIf: string[]
  /** The file as it is, for -o json; a character that would drive a terminal written as its escape. */
  text: string
}

/** Whether a saved JSON object is a watch. */
export function isWatchValue(value: Json): boolean {
  return value.schema === WATCH_SCHEMA
}

/** Reads a saved watch; `source` (the path) names it in the one-line error. */
export function watchFromValue(value: Json, text: string, source: string): SavedWatchFile {
  const problem = problemWith(WatchFileSchema, value, { quoteTop: true })
  if (problem !== null) throw new UsageError(`${source}: invalid watch: ${problem}`)
  const { run, failIf, comparisons: _c, ...rest } = value
  const checks = (failIf as { checks: Array<{ condition: { text: string } }> } | undefined)?.checks ?? []
  const watch = printableDeep(rest) as WatchResult
  if (run !== undefined) {
    if (typeof run !== 'object' || run === null || Array.isArray(run)) throw new UsageError(`${source}: invalid watch: "run" must be an object`)
    watch.run = resultFromValue(run as Json, `${source} (its run)`)
  }
  return { watch, failIf: [...new Set(checks.map((c) => c.condition.text))], text: printableJson(text) }
}
