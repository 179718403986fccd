/**
 * `--fail-if` conditions, so a CI pipeline can gate on a regression:
 *
 *   p99>+10%        p99 rose by more than 10 % against the first run
 *   rps<-5%         requests/s fell by more than 5 %
 *   p50>25ms        p50 above 25 ms (any unit -t takes: 800us, 1.5s, 2m; a plain number is ms)
 *   error_rate>1%   more than 1 % of requests failed
 *   extra_load>10   hedging added more than 10 % extra attempts
 *   slow>=1         at least one request slower than --slow
 *
 * A signed percentage is a change relative to the first run; anything else
 * is an absolute value in the metric's unit. Conditions are checked on every
 * run after the first (the baseline); one run meeting it is enough. A
 * change holds only where the table judges it beyond noise (better or
 * worse) and it passes the threshold: never on a change the table calls
 * within noise. A percentile compare marks "not enough requests" cannot be
 * judged: its value is the slowest request or close to it, not the
 * percentile; the gate fails closed unless --allow-unjudged.
 *
 * On a run itself (run-fail-if.ts) a condition may name a phase,
 * `hedged.p99>50ms` or `plain.error_rate>1%`; there the baseline of a
 * relative change is the run's plain phase.
 */
import { METRIC_KEYS, type Comparison, type MetricChange, type MetricKey, type MetricRow } from './compare.js'
import { formatDelta } from './compare-format.js'
import { readDuration } from '../core/duration.js'
import { UsageError } from '../core/errors.js'
import { readableConfigValue } from '../results/config-entries.js'
import type { PhaseName } from '../results/run-result.js'

export type FailOperator = '>' | '<' | '>=' | '<='

export interface FailCondition {
  /** The condition as the user wrote it. */
  text: string
  metric: MetricKey
  op: FailOperator
  /** 'relative': `value` is a percent change from the first run; 'absolute': a value in the metric's unit. */
  kind: 'absolute' | 'relative'
  value: number
  /** The phase named before the metric (`hedged.p99`), on runs only; absent when none was. */
  phase?: Exclude<PhaseName, 'warmup'>
}

export interface FailCheck {
  condition: FailCondition
  holds: boolean
  /** Names of the runs meeting the condition. */
  runs: string[]
  /** For each of `runs`, the value seen: "p99 = 63.2 ms (+14.2% against before.json's 55.3 ms)". */
  observed: string[]
  /** Runs a change (+N%/-N%) could not be judged for, and why: "n = 50 for p99.9; needs 3688". */
  unchecked: Array<{ run: string; why: string }>
  /** One line per run after the first: which way the gate went there and why. */
  lines: string[]
}

const CONDITION_RE = /^([a-z_][a-z0-9_.]*)\s*(>=|<=|>|<)\s*(\S+)$/i
const RELATIVE_RE = /^([+-])(\d+(?:\.\d+)?|\.\d+)%$/
const PERCENT_RE = /^(\d+(?:\.\d+)?|\.\d+)%$/
const LATENCY_METRICS = new Set<string>(METRIC_KEYS.filter((k) => !['slow', 'error_rate', 'rps', 'extra_load'].includes(k)))
const PERCENT_METRICS = new Set<string>(['error_rate', 'extra_load'])

const FORMS =
  'use [PHASE.]METRIC OP VALUE, e.g. p99>+10% (change from the first run), p50>25ms, hedged.p99>50ms, error_rate>1%, rps<-5%, extra_load>10; ' +
  `metrics: ${METRIC_KEYS.join(' ')}; operators: > < >= <=`

/** Parses one condition; throws a one-line UsageError (and nothing else) on bad input. */
export function parseFailIf(text: string): FailCondition {
  const raw = String(text).trim()
  const match = CONDITION_RE.exec(raw)
  if (!match) throw bad(raw, 'not understood')
  const { phase, name: metric } = splitPhase(match[1]!.toLowerCase())
  if (!isMetric(metric)) throw bad(raw, `unknown metric "${clip(metric)}"`)
  const op = match[2] as FailOperator
  return { text: raw, metric, op, ...parseValue(raw, metric, match[3]!), ...(phase ? { phase } : {}) }
}

/** "hedged.p99.9" -> hedged + p99.9 (a metric may hold dots itself, so only a known phase is split off). */
function splitPhase(name: string): { phase: FailCondition['phase']; name: string } {
  const m = /^(plain|hedged)\.(.+)$/.exec(name)
  return m ? { phase: m[1] as FailCondition['phase'], name: m[2]! } : { phase: undefined, name }
}

function parseValue(raw: string, metric: MetricKey, text: string): Pick<FailCondition, 'kind' | 'value'> {
  const relative = RELATIVE_RE.exec(text)
  if (relative) return { kind: 'relative', value: finite(raw, (relative[1] === '-' ? -1 : 1) * Number(relative[2])) }
  const percent = PERCENT_RE.exec(text)
  if (percent) {
    if (!PERCENT_METRICS.has(metric)) throw bad(raw, `${metric} is not a percentage; write a change as +N% or -N%`)
    return { kind: 'absolute', value: finite(raw, Number(percent[1])) }
  }
  // A bare number is in the metric's own unit (ms for latencies, which is readDuration's bare unit).
  const duration = readDuration(text)
  if (!duration) throw bad(raw, `bad value "${clip(text)}"`)
  if (duration.unit !== null && !LATENCY_METRICS.has(metric)) throw bad(raw, `${metric} is not a latency; drop the unit "${duration.unit}"`)
  return { kind: 'absolute', value: finite(raw, duration.ms) }
}

function isMetric(name: string): name is MetricKey {
  return (METRIC_KEYS as readonly string[]).includes(name)
}

function finite(raw: string, value: number): number {
  if (!Number.isFinite(value)) throw bad(raw, 'value too large')
  return value
}

function bad(raw: string, why: string): UsageError {
  return new UsageError(`invalid --fail-if ${JSON.stringify(clip(raw))}: ${why}; ${FORMS}`)
}

/** Long or multi-line input would break the one-line message. */
function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** Checks each condition against every run after the first. */
export function checkFailIf(conditions: FailCondition[], comparison: Comparison): FailCheck[] {
  return conditions.map((condition) => {
    const row = comparison.metrics.find((m) => m.metric === condition.metric)
    const held = comparison.runs.flatMap((_, i) => (i > 0 && row !== undefined && holdsAt(condition, row.values[i] ?? null, row.changes[i] ?? null) ? [i] : []))
    const unchecked = comparison.runs.flatMap((r, i) => {
      // The first run is the baseline: its change is null, so it is never "not checked".
      const why = uncheckedWhy(condition, row?.changes[i] ?? null)
      return why === null ? [] : [{ run: r.name, why }]
    })
    const observed = held.map((i) => {
      const seen = `${condition.metric} = ${showValue(condition.metric, row!.values[i] ?? null)}`
      const pct = row!.changes[i]?.pct
      const against =
        pct === null || pct === undefined
          ? ''
          : ` (${pct >= 0 ? '+' : ''}${pct.toFixed(1)}% against ${comparison.runs[0]!.name}'s ${showValue(condition.metric, row!.values[0] ?? null)})`
      return seen + against
    })
    const lines = comparison.runs.flatMap((r, i) => (i === 0 ? [] : [gateLine(condition, r.name, row, i)]))
    return { condition, holds: held.length > 0, runs: held.map((i) => comparison.runs[i]!.name), observed, unchecked, lines }
  })
}

/**
 * An absolute condition is checked on the value measured, however few the
 * requests (as the run's own --fail-if does); a change (+N%/-N%) only when
 * compare could judge it (with too few requests it does not hold, and
 * uncheckedWhy says so: the caller fails closed), and only when compare
 * judged it beyond noise: a gate says what the table says.
 */
export function holdsAt(c: FailCondition, value: number | null, change: MetricChange | null): boolean {
  if (c.kind === 'absolute') return value !== null && compare(value, c.op, c.value)
  if (!change || uncheckedWhy(c, change) !== null || change.verdict === 'within noise') return false
  return compare(relativePct(change), c.op, c.value)
}

/** From a baseline of 0, any rise is an infinite relative change. */
function relativePct(change: MetricChange): number {
  return change.pct ?? (change.abs === 0 ? 0 : Math.sign(change.abs) * Infinity)
}

/**
 * Which way a gate went for one run (the `i`th of the metric's row, absent
 * when the comparison has no such metric), and why: "holds: p99 +14.2%,
 * worse beyond noise", "does not hold: p99 +14.2% is within noise (interval
 * -2.10 ms to +20.3 ms, from the baseline set)", "not judged: not enough
 * requests (...)". The interval reads as the compare table's does.
 */
export function gateLine(c: FailCondition, run: string, row: MetricRow | undefined, i: number): string {
  const value = row?.values[i] ?? null
  const change = row?.changes[i] ?? null
  const verb = holdsAt(c, value, change) ? 'holds' : 'does not hold'
  const held = `${verb} for ${run}`
  if (c.kind === 'absolute') return `${held}: ${c.metric} = ${showValue(c.metric, value)}, against ${c.op} ${c.value}`
  const unjudged = uncheckedWhy(c, change)
  if (unjudged !== null) return `not judged for ${run}: ${unjudged}`
  if (!change) return `${held}: no ${c.metric} to compare`
  const pct = relativePct(change)
  const seen = `${c.metric} ${pct >= 0 ? '+' : ''}${Number.isFinite(pct) ? pct.toFixed(1) : pct}%`
  if (change.verdict === 'within noise') {
    const interval = change.interval
      ? ` (interval ${formatDelta(change.interval[0], row!.unit)} to ${formatDelta(change.interval[1], row!.unit)}${change.noise ? `, from the ${change.noise}` : ''})`
      : ' (no interval)'
    return `${held}: ${seen} is within noise${interval}`
  }
  return `${held}: ${seen}, ${change.verdict} beyond noise, ${verb === 'holds' ? 'past' : 'not past'} ${c.op} ${c.value > 0 ? '+' : ''}${c.value}%`
}

/** Why a change condition could not be checked (too few requests for the percentile), or null. */
export function uncheckedWhy(c: FailCondition, change: MetricChange | null): string | null {
  if (c.kind !== 'relative' || change?.verdict !== 'not enough requests') return null
  return `not enough requests${change.note ? ` (${change.note})` : ''}`
}

/**
 * Settings that make two runs different experiments, not a before and an
 * after: another load (concurrency, as compare counts it across shards; a
 * rate; calls per request), another request (method, body), another
 * threshold for what is slow, another phase. A flag flipped on hedging, a
 * URL, a header or the request count leave them comparable.
 */
const NOT_COMPARABLE = new Set(['concurrency', 'rate', 'fanout', 'method', 'bodyBytes', 'slowMs', 'phase'])

/**
 * Why gates on this comparison cannot be answered either way (exit
 * INCONCLUSIVE_EXIT_CODE), or none: a run whose generator was saturated
 * measured itself; runs not comparable measured different experiments.
 */
export function inconclusiveWhy(comparison: Comparison): string[] {
  const saturated = comparison.runs.filter((r) => r.generatorSaturated).map((r) => `${r.name}: the load generator was saturated (${r.phase} phase)`)
  const differs = comparison.kind === 'runs' ? comparison.configDifferences.filter((d) => NOT_COMPARABLE.has(d.key)) : []
  // Each value as the configuration table shows it: an unset one reads "none", not the stored null.
  const values = (d: Comparison['configDifferences'][number]): string => d.values.map((v) => readableConfigValue(d.key, v)).join(' vs ')
  return [...saturated, ...differs.map((d) => `the runs are not comparable: ${d.key} differs (${values(d)})`)]
}

/** A metric's value as a gate message shows it: "63.2 ms", "1.5%", "980 req/s", "12". */
export function showValue(metric: MetricKey, value: number | null): string {
  if (value === null) return 'none'
  if (metric === 'slow') return String(value)
  const v = Number(value.toPrecision(4))
  if (PERCENT_METRICS.has(metric)) return `${v}%`
  if (metric === 'rps') return `${v} req/s`
  return `${v} ms`
}

function compare(x: number, op: FailOperator, y: number): boolean {
  switch (op) {
    case '>':
      return x > y
    case '<':
      return x < y
    case '>=':
      return x >= y
    case '<=':
      return x <= y
  }
}
