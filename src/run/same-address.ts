/**
 * URLs whose connections reached one address (127.0.0.1:8080 and
 * localhost:8080) are most likely one server under two names: hedging
 * between them cannot show what independent replicas would. A proxy that
 * routes by host name is the exception, and the warning names it.
 */
export function sameAddressWarnings(names: readonly string[], peers: readonly string[]): string[] {
  const byPeer = new Map<string, string[]>()
  peers.forEach((peer, i) => byPeer.set(peer, [...(byPeer.get(peer) ?? []), names[i]!]))
  return [...byPeer]
    .filter(([, same]) => same.length > 1)
    .map(
      ([peer, same]) =>
        `${same.join(' and ')} reach the same address (${peer}): unless a proxy there routes by host name, their hedges go to the same server, so replica independence is not guaranteed`,
    )
}
