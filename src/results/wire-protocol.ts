/**
 * What each replica's connections spoke, and how every renderer names it.
 * A result saved before it was recorded has no `protocols`: each replica's
 * is 'unknown' here, and nowhere else decides that.
 */
import { isGrpcUrl } from '../core/target-url.js'
import type { ReplicaProtocol, RunResult, WireProtocol } from './run-result.js'

export type ShownProtocol = WireProtocol | 'unknown'

const LABELS: Record<ShownProtocol, string> = {
  'http/1.1': 'HTTP/1.1',
  h2: 'HTTP/2 (h2 via ALPN)',
  h2c: 'HTTP/2 (h2c)',
  unknown: 'protocol not recorded',
}

/** The protocol one replica (a URL of config.urls) spoke. */
export function replicaProtocol(result: RunResult, url: string): ShownProtocol {
  return result.protocols?.find((p) => p.url === url)?.protocol ?? 'unknown'
}

/** "HTTP/2 (h2c)", "gRPC over HTTP/2 (h2 via ALPN)", "protocol not recorded". */
export function protocolLabel(protocol: ShownProtocol, url: string): string {
  return protocol !== 'unknown' && isGrpcUrl(url) ? `gRPC over ${LABELS[protocol]}` : LABELS[protocol]
}

/** One replica's protocol as reports show it. */
export function replicaProtocolLabel(result: RunResult, url: string): string {
  return protocolLabel(replicaProtocol(result, url), url)
}

/** The run's protocols in words: one label when every replica spoke the same, else each with its replicas counted. */
export function protocolsText(result: RunResult): string {
  const counts = new Map<string, number>()
  for (const url of result.config.urls) {
    const label = replicaProtocolLabel(result, url)
    counts.set(label, (counts.get(label) ?? 0) + 1)
  }
  if (counts.size <= 1) return [...counts.keys()][0] ?? LABELS.unknown
  return [...counts].map(([label, n]) => `${label} (${n} replica${n === 1 ? '' : 's'})`).join(', ')
}

/** The run's distinct wire protocols, space-separated in replica order ("h2c", "h2c h2"; "unknown" when not recorded). */
export function protocolIds(result: RunResult): string {
  return [...new Set(result.config.urls.map((url) => replicaProtocol(result, url)))].join(' ')
}

/** Merged shards: a replica's protocol where every shard that recorded one agrees; left out (unknown) where they differ. */
export function mergeProtocols(results: readonly RunResult[]): ReplicaProtocol[] | undefined {
  const byUrl = new Map<string, Set<WireProtocol>>()
  for (const r of results) for (const p of r.protocols ?? []) byUrl.set(p.url, (byUrl.get(p.url) ?? new Set()).add(p.protocol))
  const agreed = [...byUrl].flatMap(([url, seen]) => (seen.size === 1 ? [{ url, protocol: [...seen][0]! }] : []))
  return agreed.length > 0 ? agreed : undefined
}
