/**
 * The demo's table, in the shape of the seed article's:
 *
 *   4 in flight     p99      p99.9     >1s   extra   server / client
 *   no hedge      25.5 ms  1015.6 ms   38     -      4000 / 4000  match
 */
import { formatMs } from '../core/duration.js'
import type { DemoResult } from '../sim/demo.js'
import type { PhaseResult, RunResult } from '../results/run-result.js'
import { formatTable } from './table.js'
import { hedgeVerdict } from './verdict.js'
import { extraLoadPct } from '../results/extra-load.js'

export function renderDemo(demo: DemoResult): string {
  const blocks = demo.runs.map(({ concurrency, result }) => demoBlock(concurrency, result))
  const intro = `hedgebench demo: profile "${demo.profile}" on the built-in simulated replicas (each run: warm-up, plain, hedged)\n`
  return [intro, ...blocks, footnote(demo)].join('\n')
}

function demoBlock(concurrency: number, result: RunResult): string {
  const plain = result.phases.plain
  const hedged = result.phases.hedged
  const slowLabel = `>${formatMs(result.config.slowMs).replace(' ', '')}`
  const header = [`${concurrency} in flight`, 'p99', 'p99.9', slowLabel, 'extra', 'server / client']
  const rows = [header]
  if (plain) rows.push(row('no hedge', plain))
  if (hedged) rows.push(row(`hedge@${formatMs(hedged.hedging?.delayMs ?? 0).replace(' ', '')}`, hedged))
  const lines = formatTable(rows, ['left', 'right', 'right', 'right', 'right', 'right'])
  if (plain && hedged) {
    const verdict = hedgeVerdict(plain, hedged, result)
    lines.push(verdict.headline, ...verdict.details.map((d) => `  ! ${d}`))
  }
  if (hedged?.hedging) lines.push(`  delay: ${hedged.hedging.delaySource}; ${hedged.hedging.cancelled} losers cancelled, ${hedged.hedging.unsent} hedges never reached the wire`)
  if (result.partial) lines.push(`  PARTIAL: interrupted during ${result.stoppedIn}`)
  return lines.join('\n') + '\n'
}

function row(name: string, phase: PhaseResult): string[] {
  const server = phase.server
  const check = server ? `${server.received} / ${server.clientAttempts}  ${server.match ? 'match' : 'MISMATCH'}` : `? / ${phase.attempts}`
  const extra = phase.hedging ? `${extraLoadPct(phase).toFixed(1)}%` : '-'
  return [name, formatMs(phase.latencyMs.p99), formatMs(phase.latencyMs['p99.9']), String(phase.slow.count), extra, check]
}

function footnote(demo: DemoResult): string {
  const n = demo.runs[0]?.result.config.requests ?? 0
  return `Each row: ${n} requests. "server / client" = requests the replicas received vs attempts the client put on the wire (they must match: no lost updates).\nRun "hedgebench --profile ${demo.profile} -c 40" for the full report, or see profiles/ for other scenarios.\n`
}
