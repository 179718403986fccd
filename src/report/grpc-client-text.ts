/**
 * The text block of a `--hedge-by grpc-js` phase: what the gRPC client
 * really did next to what its service config asked for, the tail beside the
 * plain and hedgebench-hedged phases of the same run, and the caveats that
 * occurred. A pure function over the RunResult, like every renderer.
 */
import { MAX_ATTEMPTS_CAP } from '../hedging/policy.js'
import { formatMs } from '../core/duration.js'
import { generatorLines } from './generators-text.js'
import { GRPC_OVER_DELAY_SLACK_MS, type GrpcClientResult, type RunResult } from '../results/run-result.js'

export function grpcClientText(result: RunResult): string[] {
  const g = result.grpcClient
  if (!g) return []
  const facts = grpcClientFacts(g)
  // Labels padded to the longest, plus a space.
  const width = Math.max(...facts.map(([label]) => label.length)) + 2
  const lines = [
    `=== hedged by ${g.client} (the client's own hedgingPolicy) ===`,
    '',
    ...facts.map(([label, value]) => `  ${`${label}:`.padEnd(width)}${value}`),
  ]
  lines.push(
    '',
    ...grpcClientTail(result).map(
      (row) =>
        `  ${row[0]!.padEnd(10)}${row
          .slice(1)
          .map((c) => c.padStart(13))
          .join('')}`,
    ),
  )
  if (g.caveats.length > 0) lines.push('', 'Caveats:', ...g.caveats.map((c) => `  - ${c}`))
  return lines
}

/** What the service config asked for and what the client did, as [label, value] (text and HTML). */
export function grpcClientFacts(g: GrpcClientResult): Array<[string, string]> {
  const a = g.asked
  const extra = g.requests > 0 ? ((100 * g.hedgesSent) / g.requests).toFixed(1) : '0.0'
  const facts: Array<[string, string]> = [
    [
      'Asked (service config)',
      `maxAttempts ${a.maxAttempts}${a.maxAttempts > MAX_ATTEMPTS_CAP ? ` (gRPC treats it as ${MAX_ATTEMPTS_CAP})` : ''}, hedgingDelay ${formatMs(a.hedgingDelayMs)}, nonFatalStatusCodes [${a.nonFatalStatusCodes.join(', ')}], ` +
        `retryThrottling ${a.retryThrottling ? `maxTokens ${a.retryThrottling.maxTokens} tokenRatio ${a.retryThrottling.tokenRatio}` : 'none'}, ${a.loadBalancing}`,
    ],
    [
      'Did',
      `${g.requests} calls, ${g.attempts} attempts (channelz calls_started), ${g.hedgesSent} hedges (+${extra}% extra load)${g.warmup ? `, after ${g.warmup} warm-up calls (excluded)` : ''}`,
    ],
    [`Calls over the delay + ${GRPC_OVER_DELAY_SLACK_MS} ms`, overDelay(g)],
    ['Answered by', winners(g)],
    ['Per replica (attempts)', g.perReplica.map((r) => `${r.address} ${r.attempts}`).join(', ')],
    [
      'Errors',
      `${g.errors} (${Object.entries(g.statusCodes)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')})`,
    ],
    ['Slow', `${g.slow.count} calls over ${formatMs(g.slow.thresholdMs)}`],
    ...(g.deadlineMs === undefined ? [] : [['Deadline per call', `${formatMs(g.deadlineMs)} (grpc-timeout)`] as [string, string]]),
    ...(g.generator ? [['Generator', generatorLines(g.generator).join(' · ')] as [string, string]] : []),
  ]
  if (g.server)
    facts.push([
      'Server cross-check',
      `server received ${g.server.received} vs client attempts ${g.attempts}: ${g.server.match ? 'MATCH' : 'MISMATCH'}; cancelled ${g.server.cancelled}`,
    ])
  // The work the copies cost, as the servers count it where they report it (a copy reset before its handler ran cost nothing).
  if (g.server?.started !== undefined && g.requests > 0) {
    facts.push([
      'Server work',
      `${g.server.started} calls began executing for ${g.requests} calls: +${((100 * Math.max(0, g.server.started - g.requests)) / g.requests).toFixed(1)}% extra work (vs +${extra}% extra attempts sent)`,
    ])
  }
  return facts
}

/** Zero calls over the delay with hedging asked for: nothing to hedge, said as information. */
function overDelay(g: GrpcClientResult): string {
  if (g.callsOverDelay === 0 && g.asked.maxAttempts > 1)
    return `0 (no call took longer than hedgingDelay ${formatMs(g.asked.hedgingDelayMs)} + ${GRPC_OVER_DELAY_SLACK_MS} ms: nothing to hedge)`
  return String(g.callsOverDelay)
}

function winners(g: GrpcClientResult): string {
  const entries = Object.entries(g.winsByAttempt).sort(([x], [y]) => Number(x) - Number(y))
  if (g.hedgesSent === 0) return 'the original in every call (no hedge was sent)'
  return entries.map(([n, count]) => `${n === '0' ? 'original' : `hedge ${n}`}: ${count}`).join(', ')
}

/** plain | hedgebench | grpc-js, the tail percentiles side by side: header row first (text and HTML). */
export function grpcClientTail(result: RunResult): string[][] {
  const g = result.grpcClient
  if (!g) return []
  const { plain, hedged } = result.phases
  const columns: Array<[string, { p50: number; p99: number; 'p99.9': number; max: number }, number, number]> = []
  if (plain) columns.push(['plain', plain.latencyMs, plain.attempts, plain.requests])
  if (hedged) columns.push(['hedgebench', hedged.latencyMs, hedged.attempts, hedged.requests])
  columns.push([g.client, g.latencyMs, g.attempts, g.requests])
  return [
    ['', ...columns.map((c) => c[0])],
    ...(['p50', 'p99', 'p99.9', 'max'] as const).map((p) => [p, ...columns.map((c) => formatMs(c[1][p]))]),
    ['attempts', ...columns.map((c) => `${c[2]} / ${c[3]}`)],
  ]
}
