/**
 * The demo's table, in the shape of the Raspberry Pi article's:
 *
 *   4 in flight     p99      p99.9     >1s   extra   server / client
 *   no hedge      25.5 ms  1015.6 ms   38     -      4000 / 4000  match
 *
 * With --http2 each block names its protocol ("4 in flight over h2c"), says
 * what the hedged phase's cancels cost the connections, and a last table
 * puts HTTP/1.1 and h2c side by side.
 */
import { formatMs } from '../core/duration.js'
import type { DemoProtocol, DemoResult } from '../results/demo-result.js'
import type { PhaseResult, RunResult } from '../results/run-result.js'
import { formatTable } from './table.js'
import { hedgeVerdict } from './verdict.js'
import { extraLoadPct } from '../results/extra-load.js'
import { unsentBreakdown } from './unsent-text.js'
import { crossCheckLabel } from './server-check-verdict.js'

export function renderDemo(demo: DemoResult): string {
  const blocks = demo.runs.map(({ concurrency, result, protocol }) => demoBlock(concurrency, result, protocol))
  const intro = `hedgebench demo: profile "${demo.profile}" on the built-in simulated replicas (each run: warm-up, plain, hedged)\n`
  const protocols = demo.runs.some((r) => r.protocol) ? [protocolTable(demo)] : []
  return [intro, ...blocks, ...protocols, footnote(demo)].join('\n')
}

function demoBlock(concurrency: number, result: RunResult, protocol?: DemoProtocol): string {
  const plain = result.phases.plain
  const hedged = result.phases.hedged
  const slowLabel = `>${formatMs(result.config.slowMs).replace(' ', '')}`
  const header = [`${concurrency} in flight${protocol ? ` over ${protocol}` : ''}`, 'p99', 'p99.9', slowLabel, 'extra', 'server / client']
  const rows = [header]
  if (plain) rows.push(row('no hedge', plain))
  if (hedged) rows.push(row(`hedge@${formatMs(hedged.hedging?.delayMs ?? 0).replace(' ', '')}`, hedged))
  const lines = formatTable(rows, ['left', 'right', 'right', 'right', 'right', 'right'])
  if (plain && hedged) {
    const verdict = hedgeVerdict(plain, hedged, result)
    lines.push(verdict.headline, ...verdict.details.map((d) => `  ! ${d}`))
  }
  if (hedged?.hedging)
    lines.push(
      `  delay: ${hedged.hedging.delaySource}; ${hedged.hedging.cancelled} losers cancelled, ${hedged.hedging.unsent} attempt${hedged.hedging.unsent === 1 ? '' : 's'} never reached the wire${unsentBreakdown(hedged.hedging)}`,
    )
  if (protocol && hedged)
    lines.push(
      `  cancels cost: ${hedged.streamsResetByCancel ?? 0} streams reset, ${hedged.connectionsClosedByCancel ?? 0} connections closed; ${hedged.connectionsOpened} connections opened`,
    )
  if (result.partial) lines.push(`  PARTIAL: interrupted during ${result.stoppedIn}`)
  return lines.join('\n') + '\n'
}

function row(name: string, phase: PhaseResult): string[] {
  const server = phase.server
  const check = server ? `${server.received} / ${server.clientAttempts}  ${crossCheckLabel(server)}` : `? / ${phase.attempts}`
  const extra = phase.hedging ? `${extraLoadPct(phase).toFixed(1)}%` : '-'
  return [name, formatMs(phase.latencyMs.p99), formatMs(phase.latencyMs['p99.9']), String(phase.slow.count), extra, check]
}

/** HTTP/1.1 against h2c, per concurrency: the hedged phase's connections, extra load and tail. */
function protocolTable(demo: DemoResult): string {
  const rows = [['hedged phase', 'conns opened', 'closed by cancel', 'streams reset', 'extra', 'p99.9']]
  for (const { concurrency, result, protocol } of demo.runs) {
    const h = result.phases.hedged
    if (!h || !protocol) continue
    const extra = h.hedging ? `${h.hedging.extraLoadPct.toFixed(1)}%` : '-'
    rows.push([
      `${concurrency} in flight, ${protocol}`,
      String(h.connectionsOpened),
      String(h.connectionsClosedByCancel ?? 0),
      String(h.streamsResetByCancel ?? 0),
      extra,
      formatMs(h.latencyMs['p99.9']),
    ])
  }
  const lines = formatTable(rows, ['left', 'right', 'right', 'right', 'right', 'right'])
  lines.push("  HTTP/1.1: a cancel closes the loser's connection and the next attempt opens one; h2c: a cancel resets a stream, the connection lives on.")
  return lines.join('\n') + '\n'
}

function footnote(demo: DemoResult): string {
  const n = demo.runs[0]?.result.config.requests ?? 0
  const cut = demo.runs.some((r) => r.result.partial) ? ', or what an interrupted run measured' : ''
  return `Each row: ${n} requests${cut}. "server / client" = requests the replicas received vs attempts the client put on the wire (they must match: no lost updates).\nRun "hedgebench --profile ${demo.profile} -c ${demo.runs[demo.runs.length - 1]?.concurrency ?? 40}" for the full report, or see profiles/ for other scenarios.\n`
}
