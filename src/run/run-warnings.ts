/**
 * The one place a run's warnings are collected, and the order they appear
 * in the result: the server-stats failure first (no cross-check follows
 * from it); then what the run said while it ran (the hedge delay's
 * derivation and its hedged lane's set-up: run-plan.ts; a late start);
 * then what the options and the targets call for (one URL, two names of
 * one address, --unsafe-hedge, the open-file limit, closed loop), the
 * options that had no effect, -z beside -n; a server's broken HTTP/2
 * limits, a latency in the response body (hedging cannot cut it); and last
 * each phase's generator warnings, by phase, and grpc-js's.
 */
import { formatMs } from '../core/duration.js'
import { redactUrl } from '../core/redact.js'
import { shownOrigin } from '../core/target-url.js'
import type { GrpcClientResult, PhaseResult, StartRecord } from '../results/run-result.js'
import { fdLimitWarning } from './fd-limit.js'
import { protocolFor } from './protocol-choice.js'
import type { ResolvedRun } from './resolve-options.js'
import type { RunOptions } from './run-options.js'
import { sameAddressWarnings } from './same-address.js'
import { h2LimitWarnings } from './h2-limit-warnings.js'
import { bodyLatencyWarnings } from './body-latency.js'

/** What the result's warnings are read from once the run is over. */
export interface RunEnd {
  cfg: ResolvedRun
  options: RunOptions
  /** The address each URL reached (the pre-run check), by index. */
  peers: readonly string[]
  /** --server-stats: its URL and why it could not be read (null when it could). */
  serverStats: { url: string; failure: string | null } | null
  phases: readonly PhaseResult[]
  grpcClient: GrpcClientResult | null
}

export class RunWarnings {
  readonly #said: string[] = []

  /** What the run said while it ran (in the order it was said). */
  add(...warnings: readonly string[]): void {
    this.#said.push(...warnings)
  }

  /** --start-at: this shard started later than allowed. */
  lateStart(record: StartRecord): void {
    if (!record.late) return
    this.add(
      `started ${formatMs(record.lateMs)} after --start-at (more than the ${formatMs(record.maxLatenessMs)} allowed): this shard's window may not overlap the others'`,
    )
  }

  /** Every warning of the run, in the result's order. */
  finish(end: RunEnd): string[] {
    const { cfg, options } = end
    const failure = end.serverStats?.failure
    const out = [
      ...(failure ? [`--server-stats ${redactUrl(end.serverStats!.url, cfg.showSecret)} could not be read: ${failure}; no server cross-check`] : []),
      ...this.#said,
      ...runWarnings(cfg, end.peers),
      ...ignoredOptions(options, cfg),
    ]
    if (options.durationMs !== undefined && options.requests !== undefined) {
      out.push(
        `-z ${formatMs(options.durationMs)} and -n ${options.requests} given: -z wins (as in hey), each phase ran for ${formatMs(options.durationMs)} and -n was ignored`,
      )
    }
    out.push(...h2LimitWarnings(end.phases))
    out.push(...bodyLatencyWarnings(end.phases))
    for (const phase of end.phases) for (const w of phase.generator.warnings) out.push(`${phase.name}: ${w}`)
    for (const w of end.grpcClient?.generator?.warnings ?? []) out.push(`grpc-js: ${w}`)
    return out
  }
}

/** What the run's settings and targets call for, whatever was measured. */
function runWarnings(cfg: ResolvedRun, peers: readonly string[]): string[] {
  const warnings: string[] = []
  if (cfg.mode !== 'plain' && cfg.urls.length === 1) {
    const how = protocolFor(cfg).transport.http2 ? 'as another stream on its HTTP/2 connection' : 'on a separate connection'
    warnings.push(`one URL: hedges go to the same origin ${how}, so replica independence is not guaranteed`)
  }
  if (cfg.mode !== 'plain') warnings.push(...sameAddressWarnings(cfg.urls.map(shownOrigin), peers))
  if (cfg.hedge.allowedBy === '--unsafe-hedge') {
    warnings.push(`--unsafe-hedge: ${cfg.method} requests were hedged without idempotency keys; the target may have executed them twice`)
  }
  if (cfg.mode !== 'plain' && cfg.hedge.maxAttempts === 1 && !cfg.hedge.parallel) {
    warnings.push('--max-attempts 1 counts the original only: the hedged phase sends no hedge (use 2 or more to hedge)')
  }
  const fds = fdLimitWarning(cfg)
  if (fds !== null) warnings.push(fds)
  if (cfg.rate === null) {
    warnings.push(
      'closed loop: latency is what each worker observed, which understates the tail when the target stalls (use -q RATE for open-loop, corrected latency)',
    )
  }
  return warnings
}

/** Hedging options every phase's requests carry (lane.ts): the deadline ends a plain call as a hedged one, the key is sent on both. */
const EVERY_PHASE_KEYS: ReadonlySet<string> = new Set(['deadlineMs', 'idempotencyKey'])

/**
 * Options that had no effect in this run, said rather than recorded as if
 * they had: hedging settings of a run with no hedged phase, a delay beside
 * --parallel or --tied (every copy goes at once), adaptive bounds without
 * --adaptive, more worker threads than requests in flight.
 */
function ignoredOptions(o: RunOptions, cfg: ResolvedRun): string[] {
  const h = o.hedge ?? {}
  const out: string[] = []
  // A profile's "auto" delay is the default, not a choice the user made; a deadline and a key act on every phase.
  const hedgeKeys = Object.keys(h).filter((k) => h[k as keyof typeof h] !== undefined && !(k === 'delay' && h.delay === 'auto') && !EVERY_PHASE_KEYS.has(k))
  if (cfg.mode === 'plain' && hedgeKeys.length > 0) out.push(`--mode plain sends no hedge: the hedging options given (${hedgeKeys.join(', ')}) had no effect`)
  else if ((h.parallel || h.tied) && h.delay !== undefined)
    out.push(`--hedge-delay has no effect with ${h.tied ? '--tied' : '--parallel'}: every copy is sent at once`)
  if (!h.adaptive && (h.adaptiveWindow !== undefined || h.delayMinMs !== undefined || h.delayMaxMs !== undefined)) {
    out.push('--adaptive-window, --delay-min and --delay-max bound an adaptive delay: without --adaptive they had no effect')
  }
  if (cfg.workers > cfg.concurrency)
    out.push(
      `--workers ${cfg.workers} with -c ${cfg.concurrency}: ${cfg.concurrency} worker thread${cfg.concurrency === 1 ? '' : 's'} ran (one per request in flight at most)`,
    )
  return out
}
