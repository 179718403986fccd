/**
 * The text report's block for sharded runs: for one shard, which shard of
 * which run it was and how its start and clock went; for a merged result,
 * the merge's figures and one row per generator (its own requests, rate,
 * p99, lateness, clock offset and hedge delay: what is per generator is
 * shown per generator, never averaged).
 */
import { formatMs } from '../core/duration.js'
import type { ClockOffset, EventLoopDelay, GeneratorHealth, GeneratorRow, MergeSummary, PhaseName, RunResult } from '../results/run-result.js'
import { formatTable } from './table.js'

/** A generator's own figures over a phase (event loop, CPU, threads, GC), one or two lines, unindented and without its warnings. */
export function generatorLines(g: GeneratorHealth): string[] {
  const cpu = `CPU ${g.cpuPct.toFixed(1)}% of one core${g.cpuJudged === false ? ' (phase too short to judge)' : ''}`
  const threads = `${g.cores} generator thread${g.cores === 1 ? '' : 's'}${g.machineCores ? ` on ${g.machineCores} cores` : ''}`
  const saturated = g.saturated
    ? ` · SATURATED${g.saturatedBy?.length ? ` (${g.saturatedBy.map((c) => (c === 'cpu' ? 'CPU' : c === 'gc' ? 'GC' : 'event-loop delay')).join(' and ')})` : ''}`
    : ''
  return [
    `event-loop delay ${loopText(g.eventLoopDelayMs)} · ${cpu} · ${threads}${saturated}`,
    ...(g.gc ? [`GC pauses ${g.gc.count} (${g.gc.young} young) · total ${formatMs(g.gc.totalMs)} · longest ${formatMs(g.gc.maxMs)}`] : []),
  ]
}

/** No samples: the phase was shorter than the 10 ms sampling interval, and 0 µs would read as a measurement. */
function loopText(loop: EventLoopDelay): string {
  return loop.samples === 0 ? '- (phase shorter than one 10 ms sample)' : `p50 ${formatMs(loop.p50)} / p99 ${formatMs(loop.p99)} / max ${formatMs(loop.max)}`
}

export function shardBlock(result: RunResult): string[] {
  if (result.generators && result.merge) return mergedBlock(result)
  if (!result.shard && !result.start) return []
  const parts = [
    result.shard ? `shard ${result.shard.index}/${result.shard.count}` : 'one generator',
    `run ${result.runId ?? '-'}`,
    `host ${result.host ?? '-'}`,
  ]
  if (result.start) parts.push(`start ${result.start.scheduledAt} + ${formatMs(result.start.lateMs)}${result.start.late ? ' (LATE)' : ''}`)
  parts.push(`target clock offset ${offsetText(result.clock ?? null)}`)
  return [`Shard: ${parts.join(' · ')}`]
}

function mergedBlock(result: RunResult): string[] {
  const m = result.merge!
  const lines = [
    `=== generators (merged ${m.generators} of ${m.shardCount} shards, run ${result.runId ?? '-'}) ===`,
    ...mergeFacts(result).map((l) => `  ${l}`),
  ]
  return [...lines, ...formatTable(generatorTable(result)).map((l) => `  ${l}`)]
}

/** A merged result's figures above its generators table (text and HTML). */
export function mergeFacts(result: RunResult): string[] {
  const m = result.merge
  if (!m) return []
  const phase = mainPhase(result)
  const window = phase ? result.phases[phase]?.window : undefined
  const lines = [
    `start spread ${formatMs(m.startSpreadMs)} by their own clocks` +
      (m.offsetGapMs !== null && m.offsetGapMs > 0 && m.targetStartSpreadMs !== null ? `, ${formatMs(m.targetStartSpreadMs)} by the target's` : '') +
      ` · ${clockAgreement(m)}` +
      (m.missing.length > 0 ? ` · MISSING shard(s) ${m.missing.join(', ')}` : ''),
  ]
  if (phase && window) {
    lines.push(
      `${phase}: ${result.phases[phase]!.rps.toFixed(2)} requests/s over ${formatMs(window.unionMs)} (the first shard's start to the last one's end), all of them running for ${formatMs(window.overlapMs)}`,
    )
  }
  return lines
}

/** One row per generator, header first; empty for a result that is not a merge. */
export function generatorTable(result: RunResult): string[][] {
  if (!result.generators || !result.merge) return []
  const phase = mainPhase(result)
  return [['shard', 'host', 'requests', 'rps', 'p99', 'late', 'clock offset', 'hedge delay'], ...result.generators.map((g) => generatorCells(g, phase))]
}

/**
 * Whether the clocks differ, as far as the Date headers can prove it: the
 * midpoints of overlapping offset bounds differ by chance (the bounds are up
 * to 1 s wide), so their spread is shown only beside a provable gap.
 */
function clockAgreement(m: MergeSummary): string {
  if (m.offsetGapMs === null) return 'clock offsets not measured'
  if (m.offsetGapMs === 0) return 'clock offsets agree (their bounds overlap)'
  return `clocks differ by at least ${formatMs(m.offsetGapMs)} (offset midpoints spread ${formatMs(m.offsetSpreadMs!)})`
}

/** The phase a row's figures come from: hedged when there is one (its delay is the row's), else plain. */
function mainPhase(result: RunResult): PhaseName | null {
  return result.phases.hedged ? 'hedged' : result.phases.plain ? 'plain' : result.phases.warmup ? 'warmup' : null
}

function generatorCells(g: GeneratorRow, phase: PhaseName | null): string[] {
  const p = phase ? g.phases[phase] : undefined
  return [
    String(g.shard),
    g.host,
    p ? String(p.requests) : '-',
    p ? p.rps.toFixed(1) : '-',
    p ? formatMs(p.p99Ms) : '-',
    `${formatMs(g.lateMs)}${g.late ? ' LATE' : ''}${g.saturated ? ' SATURATED' : ''}`,
    offsetText(g.clock),
    delayText(g),
  ]
}

/** A fixed delay as it is; a moving (adaptive) one as its median and range over the phase. */
function delayText(g: GeneratorRow): string {
  if (g.hedgeDelayMs === null) return '-'
  const used = g.delayUsedMs
  if (!used || (used.min === used.max && used.max === g.hedgeDelayMs)) return formatMs(g.hedgeDelayMs)
  return `${formatMs(used.p50)} (${formatMs(used.min)}-${formatMs(used.max)})`
}

/** "+12.0 ms [-3.0, +27.0]": the midpoint and the bounds, target minus local. */
function offsetText(c: ClockOffset | null): string {
  if (!c) return 'not measured'
  const signed = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`
  return `${signed((c.minMs + c.maxMs) / 2)} ms [${signed(c.minMs)}, ${signed(c.maxMs)}]`
}
