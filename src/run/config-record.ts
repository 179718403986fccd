/** The `config` block of a result: how the run was set up, credentials redacted. */
import { redactHeaders, redactUrl } from '../core/redact.js'
import type { ResolvedRun } from './resolve-options.js'
import type { RunConfig } from '../results/run-result.js'

export function buildConfigRecord(cfg: ResolvedRun): RunConfig {
  const h = cfg.hedge
  const delay = h.delay === 'auto' ? 'auto' : 'percentile' in h.delay ? `p${h.delay.percentile}` : `${h.delay.fixedMs}ms`
  return {
    urls: cfg.urls.map((url) => redactUrl(url, cfg.showSecret)),
    method: cfg.targets ? `mix of ${cfg.targets.length} targets` : cfg.method,
    headers: redactHeaders(cfg.headers, cfg.redact, cfg.showSecret),
    ...(cfg.showSecret.length > 0 ? { showSecrets: cfg.showSecret } : {}),
    bodyBytes: cfg.body?.length ?? 0,
    concurrency: cfg.concurrency,
    requests: cfg.requests,
    durationMs: cfg.durationMs,
    rate: cfg.rate,
    ...(cfg.loadSchedule ? { loadSchedule: cfg.loadSchedule } : {}),
    ...(cfg.concurrencySchedule ? { concurrencySchedule: cfg.concurrencySchedule } : {}),
    ...(cfg.skipFirst > 0 ? { skipFirst: cfg.skipFirst } : {}),
    timeoutMs: cfg.timeoutMs,
    mode: cfg.mode,
    schedule: cfg.schedule,
    warmup: cfg.warmup,
    slowMs: cfg.slowMs,
    http2: cfg.http2,
    keepAlive: cfg.keepAlive,
    fanout: cfg.fanout,
    workers: cfg.workers,
    ...(cfg.connections !== null ? { connections: cfg.connections } : {}),
    profile: cfg.profile,
    eject: cfg.eject,
    saturation: cfg.saturation,
    seed: cfg.seed,
    ...(cfg.grpc
      ? {
          grpc: {
            call: cfg.grpc.call,
            schema: cfg.grpc.schemaFile || 'server reflection',
            hedgeBy: cfg.grpc.serviceConfig ? 'grpc-js' : 'hedgebench',
            serviceConfig: cfg.grpc.serviceConfig ? JSON.stringify(cfg.grpc.serviceConfig) : null,
          },
        }
      : {}),
    hedge: {
      delay,
      adaptive: h.adaptive,
      adaptiveWindow: 'requests' in h.adaptiveWindow ? `${h.adaptiveWindow.requests} requests` : `${h.adaptiveWindow.ms}ms`,
      delayMinMs: h.delayMinMs,
      delayMaxMs: h.delayMaxMs,
      maxAttempts: h.maxAttempts,
      budgetPct: h.budgetPct,
      nonFatalStatus: h.nonFatalStatus,
      deadlineMs: h.deadlineMs,
      minHedgeWindowMs: h.minHedgeWindowMs,
      parallel: h.parallel,
      tied: h.tied ?? false,
      cancel: h.cancel,
      header: h.header,
      idempotencyKey: h.idempotencyKey,
      unsafeHedge: h.unsafeHedge,
      allowedBy: h.allowedBy ?? null,
    },
  }
}
