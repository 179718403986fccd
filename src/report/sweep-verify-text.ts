/**
 * `sweep --verify` in words: how far grpc-js, running the emitted service
 * config, was from hedgebench at the same setting on the same replicas
 * (extra load, tail), and the differences grpc-js is known for, each marked
 * when this run showed it.
 */
import { formatMs } from '../core/duration.js'
import { extraLoadPct, extraLoadPctOf } from '../results/extra-load.js'
import type { RunResult } from '../results/run-result.js'
import { grpcClientTail } from './grpc-client-text.js'
import { formatTable } from './table.js'
import { tryDecodeHistogram } from '../stats/histogram.js'
import { percentileDifference, rateDifference, type Interval } from '../stats/noise.js'

export interface Difference {
  value: number
  interval: Interval | null
}

export interface VerifyFigures {
  label: string
  hedgebench: { extraLoadPct: number; p50: number; p99: number; slow: number; requests: number }
  grpcJs: { extraLoadPct: number; p50: number; p99: number; slow: number; requests: number }
  /** grpc-js minus hedgebench, with its 95 % interval (null: too few calls to bound it): compare's tests of two runs. */
  gap: { extraLoadPoints: Difference; p99Ms: Difference }
  /** grpc-js's behaviours that differ from hedgebench's policy; `seen` when they were in play in this run (hedges sent that could meet them, or calls committed by headers). */
  differences: Array<{ text: string; seen: boolean }>
  caveats: string[]
}

/** null when the run has no grpc-js phase (it was interrupted before it). */
export function verifyFigures(label: string, run: RunResult): VerifyFigures | null {
  const hedged = run.phases.hedged
  const g = run.grpcClient
  if (!hedged || !g) return null
  const caveats = g.caveats
  const seen = (re: RegExp) => caveats.some((c) => re.test(c))
  const ours = tryDecodeHistogram(hedged.histogram)
  const theirs = tryDecodeHistogram(g.histogram)
  const load = rateDifference(
    { count: hedged.hedging?.hedgesSent ?? 0, exposure: hedged.calls?.requests ?? hedged.requests },
    { count: g.hedgesSent, exposure: g.requests },
  )
  const gap = {
    extraLoadPoints: {
      value: extraLoadPctOf(g.hedgesSent, g.requests) - extraLoadPct(hedged),
      interval: load ? ([load[0] * 100, load[1] * 100] as Interval) : null,
    },
    p99Ms: { value: g.latencyMs.p99 - hedged.latencyMs.p99, interval: ours && theirs ? percentileDifference(ours, theirs, 99) : null },
  }
  return {
    gap,
    label,
    hedgebench: {
      extraLoadPct: extraLoadPct(hedged),
      p50: hedged.latencyMs.p50,
      p99: hedged.latencyMs.p99,
      slow: hedged.slow.count,
      requests: hedged.requests,
    },
    grpcJs: { extraLoadPct: extraLoadPctOf(g.hedgesSent, g.requests), p50: g.latencyMs.p50, p99: g.latencyMs.p99, slow: g.slow.count, requests: g.requests },
    differences: [
      {
        text: 'no previous-host exclusion: a hedge can go to the replica its original is waiting on',
        seen: seen(/previous-host exclusion/) && g.hedgesSent > 0,
      },
      { text: 'retryThrottling is not applied to hedges: they are not capped by the budget', seen: seen(/retryThrottling .* was not applied/) },
      { text: 'header commit: an attempt whose response headers arrived is never hedged, even if it then stalls', seen: (g.committedByHeaders ?? 0) > 0 },
    ],
    caveats,
  }
}

export function renderVerifyText(label: string, run: RunResult): string {
  const f = verifyFigures(label, run)
  if (!f) return `--verify ${label}: interrupted before grpc-js ran; nothing to compare.\n`
  const { hedgebench: h, grpcJs: g } = f
  const points = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(1)}`
  const ms = (v: number) => `${v >= 0 ? '+' : '-'}${formatMs(Math.abs(v))}`
  const lines = [
    `Verified ${label} through grpc-js with the emitted service config, on the same replicas:`,
    `  extra load: grpc-js ${g.extraLoadPct.toFixed(1)} % against hedgebench's ${h.extraLoadPct.toFixed(1)} %, ${gapText(f.gap.extraLoadPoints, points, ' points')}`,
    `  p99: grpc-js ${formatMs(g.p99)} against ${formatMs(h.p99)}, ${gapText(f.gap.p99Ms, ms, '')}`,
    `  over --slow: ${g.slow} of ${g.requests} calls against ${h.slow} of ${h.requests}`,
    '',
    ...formatTable(grpcClientTail(run), ['left', 'right']).map((l) => `  ${l}`),
    '',
    'What grpc-js does differently (* in play in this run):',
    ...f.differences.map((d) => `  ${d.seen ? '*' : '-'} ${d.text}`),
  ]
  if (f.caveats.length > 0) lines.push('', 'grpc-js caveats:', ...f.caveats.map((c) => `  - ${c}`))
  return `${lines.join('\n')}\n`
}

/** "+1.8 points [+0.4, +3.2]: beyond noise", or within it, or unbounded with too few calls. */
function gapText(d: Difference, format: (v: number) => string, unit: string): string {
  if (!d.interval) return `${format(d.value)}${unit} (too few calls to bound the difference)`
  const beyond = d.interval[0] > 0 || d.interval[1] < 0
  return `${format(d.value)}${unit} [${format(d.interval[0])}, ${format(d.interval[1])}]: ${beyond ? 'a difference beyond noise' : 'within noise'}`
}
