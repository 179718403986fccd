/**
 * Readable names for a run's configuration keys ("hedge.budgetPct" ->
 * "hedge budget, % of requests (--hedge-budget)"), with the flag a user
 * types to set each, for the HTML report. A key not listed here (a field added later) shows as it is
 * stored, so nothing is ever hidden.
 */
const NAMES: Record<string, string> = {
  urls: 'replica URLs',
  method: 'method (-m)',
  bodyBytes: 'body size, bytes (-d)',
  concurrency: 'in flight (-c)',
  requests: 'requests per phase (-n)',
  durationMs: 'phase duration, ms (-z)',
  rate: 'rate limit, req/s (-q)',
  timeoutMs: 'timeout, ms (-t)',
  mode: 'phases (--mode)',
  schedule: 'schedule (--schedule)',
  warmup: 'warm-up requests asked (--warmup)',
  skipFirst: 'requests each measured phase sent first and left out (--skip-first)',
  slowMs: 'slow threshold, ms (--slow)',
  http2: 'HTTP/2 (--http2)',
  keepAlive: 'keep-alive (off: --disable-keepalive)',
  fanout: 'fan-out (--fanout)',
  workers: 'worker threads (--workers)',
  connections: 'HTTP/2 connections per replica (--connections)',
  profile: 'built-in profile (--profile)',
  seed: 'seed (--seed)',
  showSecrets: 'names that look like credentials, shown (--show-secret)',
  'hedge.delay': 'hedge delay (--hedge-delay)',
  'hedge.adaptive': 'adaptive delay (--adaptive)',
  'hedge.adaptiveWindow': 'adaptive window (--adaptive-window)',
  'hedge.delayMinMs': 'adaptive delay min, ms (--delay-min)',
  'hedge.delayMaxMs': 'adaptive delay max, ms (--delay-max)',
  'hedge.maxAttempts': 'max attempts (--max-attempts)',
  'hedge.budgetPct': 'hedge budget, % of requests (--hedge-budget)',
  'hedge.nonFatalStatus': 'non-fatal statuses (--non-fatal-status)',
  'hedge.deadlineMs': 'deadline, ms (--deadline)',
  'hedge.minHedgeWindowMs': 'min hedge window, ms (--min-hedge-window)',
  'hedge.parallel': 'parallel attempts (--parallel)',
  'hedge.tied': 'tied requests (--tied)',
  'hedge.cancel': 'losers are (--cancel)',
  'hedge.header': 'hedge header (--hedge-header)',
  'hedge.idempotencyKey': 'idempotency keys (--idempotency-key)',
  'hedge.unsafeHedge': 'unsafe hedge (--unsafe-hedge)',
  'hedge.allowedBy': 'hedging allowed by',
  'eject.consecutiveFailures': 'eject after failures in a row (--eject-after)',
  'eject.baseEjectionMs': 'first ejection, ms (--eject-for)',
  'eject.maxEjectionMs': 'longest ejection, ms',
  'saturation.maxErrorRate': 'no hedges above this error rate (--suppress-at-error-rate)',
  'saturation.maxInflight': 'no hedge to a replica with this many in flight (--hedge-max-inflight)',
  'saturation.obeyOverload': 'obey overload answers (--suppress)',
  'grpc.call': 'gRPC call (--call)',
  'grpc.schema': 'gRPC schema (--proto, --protoset)',
  'grpc.hedgeBy': 'hedged by (--hedge-by)',
  'grpc.serviceConfig': 'grpc-js service config (--service-config)',
}

export function readableConfig(key: string): string {
  if (key.startsWith('headers.')) return `header ${key.slice('headers.'.length)}`
  return NAMES[key] ?? key
}
