/**
 * Readable names for a run's configuration keys ("hedge.budgetPct" ->
 * "hedge budget (% of requests)"), with the flag that sets each, for the
 * HTML report. A key not listed here (a field added later) shows as it is
 * stored, so nothing is ever hidden.
 */
const NAMES: Record<string, string> = {
  urls: 'replica URLs',
  method: 'method (-m)',
  bodyBytes: 'body size (bytes)',
  concurrency: 'in flight (-c)',
  requests: 'requests per phase (-n)',
  durationMs: 'phase duration, ms (-z)',
  rate: 'rate limit, req/s (-q)',
  timeoutMs: 'timeout, ms (-t)',
  mode: 'phases (--mode)',
  schedule: 'schedule',
  warmup: 'warm-up requests',
  slowMs: 'slow threshold, ms (--slow)',
  http2: 'HTTP/2 allowed',
  keepAlive: 'keep-alive',
  fanout: 'fan-out',
  workers: 'worker threads',
  profile: 'built-in profile',
  seed: 'seed',
  'hedge.delay': 'hedge delay',
  'hedge.adaptive': 'adaptive delay',
  'hedge.adaptiveWindow': 'adaptive window',
  'hedge.delayMinMs': 'adaptive delay min, ms',
  'hedge.delayMaxMs': 'adaptive delay max, ms',
  'hedge.maxAttempts': 'max attempts',
  'hedge.budgetPct': 'hedge budget (% of requests)',
  'hedge.nonFatalStatus': 'non-fatal statuses',
  'hedge.deadlineMs': 'deadline, ms',
  'hedge.minHedgeWindowMs': 'min hedge window, ms',
  'hedge.parallel': 'parallel attempts',
  'hedge.cancel': 'losers are',
  'hedge.header': 'hedge header',
  'hedge.idempotencyKey': 'idempotency keys',
  'hedge.unsafeHedge': 'unsafe hedge',
  'hedge.allowedBy': 'hedging allowed by',
}

export function readableConfig(key: string): string {
  if (key.startsWith('headers.')) return `header ${key.slice('headers.'.length)}`
  return NAMES[key] ?? key
}
