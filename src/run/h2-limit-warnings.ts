/**
 * Servers that broke one of the HTTP/2 client's limits or its flow-control
 * rules (engine/h2-limits.ts): one line per replica and kind, which the run
 * records among its warnings and the CLI also writes on stderr, so an
 * attack (or a server configured past a limit) is said in words, not only
 * counted among the errors.
 */
import { redactUrl } from '../core/redact.js'
import { H2_LIMIT_KIND } from '../engine/h2-limits.js'
import type { PhaseResult } from '../results/run-result.js'

export function h2LimitWarnings(phases: readonly PhaseResult[]): string[] {
  const counts = new Map<string, { url: string; kind: string; n: number }>()
  for (const phase of phases)
    for (const r of phase.replicas)
      for (const [kind, n] of Object.entries(r.errorKinds)) {
        // A gRPC run names it after the status its call ended with (INTERNAL: h2: ..., protocol/grpc-error-kind.ts).
        if (!kind.startsWith(H2_LIMIT_KIND) && !kind.startsWith(`INTERNAL: ${H2_LIMIT_KIND}`)) continue
        const key = `${r.url}\0${kind}`
        const seen = counts.get(key) ?? { url: r.url, kind, n: 0 }
        seen.n += n
        counts.set(key, seen)
      }
  return [...counts.values()].map(
    ({ url, kind, n }) =>
      `${redactUrl(url)}: ${n} ${n === 1 ? 'attempt' : 'attempts'} failed as "${kind}": the server broke a limit of the HTTP/2 client, which closed its connection (GOAWAY) and counted nothing it sent (--help, HTTP/2 limits)`,
  )
}
