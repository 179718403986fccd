/**
 * The things about grpc-js's hedging that a user would not expect, checked
 * against what this phase measured, so the report shows them when they
 * happened (see /work/shared/notes/grpc-and-h2.md for how each was found).
 */
import type { GrpcClientResult } from '../results/run-result.js'

export function serviceConfigCaveats(r: GrpcClientResult): string[] {
  const caveats: string[] = []
  const asked = r.asked
  // No hedge with no call over the delay is what hedging should do (nothing to
  // hedge): not a caveat; the report says so beside "Calls over the delay".
  if (r.hedgesSent === 0 && asked.maxAttempts <= 1) caveats.push('no hedge was sent: the service config has no hedgingPolicy for this method')
  if (r.hedgesSent === 0 && asked.maxAttempts > 1 && r.callsOverDelay > 0) {
    caveats.push(`no hedge was sent although ${r.callsOverDelay} calls took longer than hedgingDelay ${asked.hedgingDelayMs} ms`)
  }
  if (asked.retryThrottling && r.hedgesSent > 0) {
    caveats.push(
      `retryThrottling (maxTokens ${asked.retryThrottling.maxTokens}, tokenRatio ${asked.retryThrottling.tokenRatio}) was not applied to these ${r.hedgesSent} hedges: grpc-js throttles retries only, not hedges (gRFC A6 says both)`,
    )
  }
  if (r.hedgesSent > 0) {
    caveats.push(
      asked.loadBalancing === 'pick_first'
        ? 'pick_first: every hedge went to the same replica as its original (grpc-js has no previous-host exclusion)'
        : `grpc-js has no previous-host exclusion: with ${asked.loadBalancing} a hedge can land on its original's replica`,
    )
  }
  if (asked.maxAttempts > 1 && r.callsOverDelay > r.hedgesSent) {
    // The cause is named only when it was seen: calls whose headers came before the delay (results saved before it was observed say nothing of it).
    const committed = r.committedByHeaders ?? 0
    caveats.push(
      committed > 0
        ? `${r.callsOverDelay} calls took longer than hedgingDelay but only ${r.hedgesSent} hedges were sent: ${committed} of them had their response headers before hedgingDelay, and grpc-js commits to the first attempt that sends response headers (as hedgebench's own engine and Envoy do: an answer that has begun is not hedged), so a server that sends headers before it stalls is never hedged`
        : `${r.callsOverDelay} calls took longer than hedgingDelay but only ${r.hedgesSent} hedges were sent`,
    )
  }
  return caveats
}
