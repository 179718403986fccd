/**
 * `hedgebench merge`: the results of the N shards of one run (or of earlier
 * merges of them) into one result of the same schema, so report, compare
 * and --fail-if read it unchanged. Exact where the shards' numbers allow:
 * counters summed, HDR histograms added bucket by bucket into a fresh
 * histogram, exact min and max kept: every field as the result algebra
 * (phase-algebra.ts) says, the same one --workers merges by.
 * Nothing is averaged. What is each generator's own (its hedge delay, its
 * timer lateness, its start, its clock) stays per generator, in one row
 * each; the merged figure for those is the worst or the range, never a mean.
 *
 * Merging is order-independent and associative: inputs are put in shard
 * order first, and everything not summed is derived from the generator
 * rows, which a merged input carries over unchanged.
 */
import { UsageError } from '../core/errors.js'
import { formatMs } from '../core/duration.js'
import { configDifference } from '../results/run-compat.js'
import {
  PHASE_NAMES,
  RESULT_SCHEMA,
  type GeneratorRow,
  type MergeSummary,
  type PhaseName,
  type PhaseResult,
  type RunConfig,
  type RunResult,
  type TargetResult,
} from '../results/run-result.js'
import { histogramPrecision } from './histogram.js'
import { mergePhaseParts } from './phase-algebra.js'
import { mergeProtocols } from '../results/wire-protocol.js'

export interface MergeInput {
  result: RunResult
  /** Where it came from (a file name, "run X shard I/N" from logs), for the one-line errors. */
  source: string
}

export interface MergeOptions {
  /** Merge what is there when shards are missing, and say so, instead of refusing. */
  allowPartial?: boolean
}

export function mergeResults(inputs: MergeInput[], opts: MergeOptions = {}): RunResult {
  if (inputs.length === 0) throw new UsageError("nothing to merge (give the shards' result files, or --from-logs -)")
  checkSameRun(inputs)
  const shardCount = shardCountOf(inputs[0]!.result)
  const missing = checkCoverage(inputs, shardCount, opts.allowPartial ?? false)
  const ordered = [...inputs].sort((a, b) => firstShard(a.result) - firstShard(b.result))
  const results = ordered.map((i) => i.result)
  const rows = results.flatMap(generatorRows).sort((a, b) => a.shard - b.shard)
  const phases: Partial<Record<PhaseName, PhaseResult>> = {}
  for (const name of PHASE_NAMES) {
    const parts = results.map((r) => r.phases[name]).filter((p): p is PhaseResult => p !== undefined)
    if (parts.length > 0) phases[name] = mergePhase(name, parts, rows)
  }
  const merge = summary(rows, shardCount, missing)
  const targets = mergeTargets(ordered, rows)
  const protocols = mergeProtocols(results)
  const first = results[0]!
  const seeds = new Set(results.map((r) => r.config.seed))
  const { seed: _seed, ...configWithoutSeed } = first.config
  return {
    schema: RESULT_SCHEMA,
    version: first.version,
    label: mergedLabel(rows, results),
    startedAt: minIso(results.map((r) => r.startedAt)),
    finishedAt: maxIso(results.map((r) => r.finishedAt)),
    partial: results.some((r) => r.partial),
    stoppedIn: results.find((r) => r.stoppedIn !== null)?.stoppedIn ?? null,
    config: seeds.size === 1 ? first.config : configWithoutSeed,
    phases,
    warnings: mergeWarnings(rows, phases, merge, first.config),
    ...(first.runId === undefined ? {} : { runId: first.runId }),
    generators: rows,
    merge,
    ...(protocols ? { protocols } : {}),
    ...(targets ? { targets } : {}),
  }
}

/**
 * A mix's targets (--targets), each target's phases merged across the shards
 * as the run's are, each with its own delays; refused when the shards did
 * not send the same targets.
 */
function mergeTargets(inputs: MergeInput[], rows: GeneratorRow[]): TargetResult[] | undefined {
  const first = inputs[0]!.result.targets
  for (const input of inputs.slice(1)) {
    const names = (r: RunResult): string => (r.targets ?? []).map((t) => `${t.name} x${t.weight}`).join(', ')
    if (names(input.result) !== names(inputs[0]!.result))
      throw new UsageError(`${input.source} sent the targets [${names(input.result)}], ${inputs[0]!.source} [${names(inputs[0]!.result)}]: not one run`)
  }
  if (!first) return undefined
  return first.map((t, i) => {
    const phases: Partial<Record<PhaseName, PhaseResult>> = {}
    for (const name of PHASE_NAMES) {
      const parts = inputs.map((input) => input.result.targets![i]!.phases[name]).filter((p): p is PhaseResult => p !== undefined)
      if (parts.length === 0) continue
      const spans = rows.map((g) => g.phases[name]).filter((w) => w !== undefined)
      const hedgeDelays = parts.map((p) => p.hedging?.delayMs).filter((d): d is number => d !== undefined)
      phases[name] = mergePhaseParts(parts, { of: 'generators', spans, hedgeDelays })
    }
    return { ...t, phases }
  })
}

// ---- what is refused ---------------------------------------------------------

function checkSameRun(inputs: MergeInput[]): void {
  for (const input of inputs) checkShardFields(input)
  const a = inputs[0]!
  const precision = precisionOf(a)
  for (const b of inputs.slice(1)) {
    if (b.result.runId !== a.result.runId) {
      throw new UsageError(
        `${b.source} is run ${b.result.runId ?? '(none)'}, ${a.source} is run ${a.result.runId ?? '(none)'}: shards of one run share a run id (one --run-id, or one --start-at and config)`,
      )
    }
    if (shardCountOf(b.result) !== shardCountOf(a.result)) {
      throw new UsageError(`${b.source} is a shard of ${shardCountOf(b.result)}, ${a.source} of ${shardCountOf(a.result)}: not one run`)
    }
    const diff = configDifference(a.result.config, b.result.config)
    // The difference reads in the order the files are named: a's value, then b's.
    if (diff !== null) throw new UsageError(`${a.source} and ${b.source} were configured differently: ${diff}`)
    const p = precisionOf(b)
    if (p !== null && precision !== null && p !== precision) {
      throw new UsageError(
        `${b.source} has histograms of ${p} significant digits, ${a.source} of ${precision}: refusing to add histograms of different precision`,
      )
    }
  }
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0

/** The sharding fields a merge relies on (result-json checks only what every renderer reads). */
function checkShardFields({ result, source }: MergeInput): void {
  const s = result.shard
  if (s !== undefined && !(isCount(s?.index) && isCount(s?.count) && s.index < s.count))
    throw new UsageError(`${source}: invalid "shard" (expected {index, count} with 0 <= index < count)`)
  const g = result.generators
  if (g === undefined) return
  if (!Array.isArray(g) || !result.merge || !isCount(result.merge.shardCount))
    throw new UsageError(`${source}: invalid merged result ("generators" and "merge" go together)`)
  for (const row of g) {
    if (!isCount(row?.shard) || row.shard >= result.merge.shardCount || typeof row.phases !== 'object' || row.phases === null || !Array.isArray(row.warnings)) {
      throw new UsageError(`${source}: invalid row in "generators"`)
    }
  }
}

/** The histograms' precision (all of one result's must agree), or null when it has none. */
function precisionOf(input: MergeInput): number | null {
  let found: number | null = null
  for (const phase of Object.values(input.result.phases)) {
    let p: number
    try {
      p = histogramPrecision(phase.histogram)
    } catch {
      throw new UsageError(`${input.source}: the ${phase.name} histogram cannot be decoded`)
    }
    if (found !== null && p !== found) throw new UsageError(`${input.source}: histograms of ${found} and ${p} significant digits in one result`)
    found = p
  }
  return found
}

/** Refuses a shard given twice; returns the missing ones (refused too, unless allowPartial). */
function checkCoverage(inputs: MergeInput[], count: number, allowPartial: boolean): number[] {
  const seen = new Map<number, string>()
  for (const input of inputs) {
    for (const shard of shardsOf(input.result)) {
      const earlier = seen.get(shard)
      if (earlier !== undefined) throw new UsageError(`shard ${shard}/${count} given twice (${earlier} and ${input.source})`)
      seen.set(shard, input.source)
    }
  }
  const missing = [...Array(count).keys()].filter((i) => !seen.has(i))
  if (missing.length > 0 && !allowPartial) {
    throw new UsageError(
      `shard${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of ${count} missing (give every shard, or --allow-partial to merge the ${seen.size} here)`,
    )
  }
  return missing
}

const shardsOf = (r: RunResult): number[] => (r.generators ? r.generators.map((g) => g.shard) : [r.shard?.index ?? 0])
const firstShard = (r: RunResult): number => Math.min(...shardsOf(r))
const shardCountOf = (r: RunResult): number => r.merge?.shardCount ?? r.shard?.count ?? 1

// ---- one row per generator -----------------------------------------------------

function generatorRows(r: RunResult): GeneratorRow[] {
  if (r.generators) return r.generators
  const phases: GeneratorRow['phases'] = {}
  for (const p of Object.values(r.phases)) {
    const wall = wallOf(r, p)
    phases[p.name] = { requests: p.requests, attempts: p.attempts, rps: p.rps, p99Ms: p.latencyMs.p99, startMs: wall.startMs, endMs: wall.endMs }
  }
  const hedging = r.phases.hedged?.hedging
  return [
    {
      shard: r.shard?.index ?? 0,
      label: r.label,
      host: r.host ?? 'unknown',
      startedAt: r.startedAt,
      lateMs: r.start?.lateMs ?? 0,
      late: r.start?.late ?? false,
      clock: r.clock ?? null,
      saturated: Object.values(r.phases).some((p) => p.generator.saturated),
      hedgeDelayMs: hedging?.delayMs ?? null,
      delaySource: hedging?.delaySource ?? null,
      delayUsedMs: hedging?.delayUsedMs ?? null,
      phases,
      warnings: r.warnings,
    },
  ]
}

/** A phase's wall-clock window; results saved before it was recorded give it from startedAt + offset. */
function wallOf(r: RunResult, p: PhaseResult): { startMs: number; endMs: number } {
  if (p.wall) return p.wall
  const startMs = Date.parse(r.startedAt) + p.startOffsetMs
  return { startMs, endMs: startMs + p.durationMs }
}

// ---- phases -------------------------------------------------------------------

function mergePhase(name: PhaseName, parts: PhaseResult[], rows: GeneratorRow[]): PhaseResult {
  const spans = rows.map((g) => g.phases[name]).filter((w) => w !== undefined)
  // A merged input names its shards' delays in its rows: the parts' own delayMs is already a range's low end.
  const hedgeDelays = rows.map((g) => g.hedgeDelayMs).filter((d): d is number => d !== null)
  return mergePhaseParts(parts, { of: 'generators', spans, hedgeDelays })
}

// ---- what the merge states --------------------------------------------------------

const firstStart = (g: GeneratorRow): number => Math.min(...Object.values(g.phases).map((p) => p.startMs))
const midpoint = (g: GeneratorRow): number => (g.clock!.minMs + g.clock!.maxMs) / 2

function summary(rows: GeneratorRow[], shardCount: number, missing: number[]): MergeSummary {
  const starts = rows.filter((g) => Object.keys(g.phases).length > 0).map(firstStart)
  const clocked = rows.filter((g) => g.clock !== null && Object.keys(g.phases).length > 0)
  const mids = clocked.map(midpoint)
  const byTarget = clocked.map((g) => firstStart(g) + midpoint(g))
  return {
    generators: rows.length,
    shardCount,
    missing,
    startSpreadMs: round1(spread(starts)),
    offsetSpreadMs: mids.length >= 2 ? round1(spread(mids)) : null,
    targetStartSpreadMs: byTarget.length >= 2 ? round1(spread(byTarget)) : null,
    offsetGapMs:
      clocked.length >= 2 ? round1(Math.max(0, Math.max(...clocked.map((g) => g.clock!.minMs)) - Math.min(...clocked.map((g) => g.clock!.maxMs)))) : null,
  }
}

/** First-phase starts this close are one agreed start (--start-at), as the start record's default lateness allows. */
const TOGETHER_MS = 100

function mergeWarnings(rows: GeneratorRow[], phases: Partial<Record<PhaseName, PhaseResult>>, merge: MergeSummary, config: RunConfig): string[] {
  const out: string[] = []
  if (merge.missing.length > 0) {
    out.push(
      `partial merge: shard${merge.missing.length > 1 ? 's' : ''} ${merge.missing.join(', ')} of ${merge.shardCount} missing; the figures cover ${rows.length} of ${merge.shardCount} shards`,
    )
  }
  for (const phase of Object.values(phases)) {
    if (rows.length > 1 && phase.window && phase.window.overlapMs === 0) {
      // Shards that started together drifted apart: each phase after the first starts when the shard's previous one ended.
      const why =
        merge.startSpreadMs <= TOGETHER_MS
          ? "the shards started together, but each phase after the first starts when that shard's previous phase ended, so they drifted apart (a -n phase ends when its requests are done)"
          : 'start them with one --start-at'
      out.push(
        `${phase.name}: the shards did not all run at the same time (no common window in ${formatMs(phase.window.unionMs)}); the target never saw their load together (${why})`,
      )
    }
  }
  if (merge.offsetGapMs !== null && merge.offsetGapMs > 0) {
    out.push(
      `the generators' clocks disagree: their offsets against the target's Date headers spread over ${formatMs(merge.offsetSpreadMs!)} (at least ${formatMs(merge.offsetGapMs)}), ` +
        `so their own start spread (${formatMs(merge.startSpreadMs)}) is not what the target saw (${formatMs(merge.targetStartSpreadMs!)}); sync their clocks (NTP/chrony)`,
    )
  }
  // A closed loop of -n requests sends every one of them, however slowly; a timed or paced one may fall short.
  const cost =
    config.rate === null && config.requests !== null ? 'it sent its share, but its latencies include its own queueing' : 'it may have sent less than its share'
  for (const g of rows) if (g.saturated) out.push(`shard ${g.shard} (${g.host}): the generator was saturated, so ${cost}; see its own report`)
  out.push(...groupedShardWarnings(rows))
  return out
}

/** Each shard's own warnings once: as they are when every shard had it, else naming the shards. */
function groupedShardWarnings(rows: GeneratorRow[]): string[] {
  const byText = new Map<string, number[]>()
  for (const g of rows) for (const w of new Set(g.warnings)) byText.set(w, [...(byText.get(w) ?? []), g.shard])
  return [...byText].map(([w, shards]) => (shards.length === rows.length ? w : `shard ${shards.join(', ')}: ${w}`))
}

// ---- small helpers ---------------------------------------------------------------------

/** The merged run named as such, not after its first shard ("shard-0"); from the rows, so merging in steps names it the same. */
function mergedLabel(rows: GeneratorRow[], results: RunResult[]): string {
  const labels = [...new Set(rows.some((g) => g.label === undefined) ? results.map((r) => r.label) : rows.map((g) => g.label!))]
  return labels.length === 1 ? `${labels[0]} (merged, ${rows.length} shards)` : `merged ${rows.length} shards (${labels.join(', ')})`
}

function spread(xs: number[]): number {
  return xs.length === 0 ? 0 : Math.max(...xs) - Math.min(...xs)
}

const minIso = (xs: string[]): string => xs.reduce((a, b) => (Date.parse(b) < Date.parse(a) ? b : a))
const maxIso = (xs: string[]): string => xs.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a))

const round1 = (x: number): number => Math.round(x * 10) / 10
