/**
 * Hedging as an undici interceptor, the shape of undici's own
 * `interceptors.retry`: compose it onto any dispatcher and every request
 * through it is hedged under the policy.
 *
 *   const agent = new Agent().compose(createHedgeInterceptor({ delay: 15, replicas }))
 */
import type { Dispatcher } from 'undici'
import { normalizePolicy, type HedgePolicy, type ResolvedPolicy } from '../hedging/policy.js'
import { HedgedRequest, type HedgeCaller } from './hedged-request.js'
import type { Protocol } from '../protocol/protocol.js'

/** `protocol`: how attempts are framed and answers classified (default HTTP). */
export function createHedgeInterceptor(policy: HedgePolicy | ResolvedPolicy, protocol?: Protocol): Dispatcher.DispatcherComposeInterceptor {
  const resolved = isResolved(policy) ? policy : normalizePolicy(policy)
  const replicas = resolved.replicas ? new Set(resolved.replicas) : null
  return (dispatch) =>
    function hedgedDispatch(opts, handler) {
      // An Agent serves every origin: a request to one outside the replicas is not this policy's, and its hedges
      // would be answered by other servers. It goes through as it came.
      if (replicas !== null && !isReplica(replicas, opts.origin)) return dispatch(opts, handler)
      new HedgedRequest(dispatch, opts, handler as HedgeCaller, resolved, protocol).start()
      return true
    }
}

/** The request's origin is one of the replicas: the usual string first (one Set lookup), then any other spelling of it. */
function isReplica(replicas: ReadonlySet<string>, origin: Dispatcher.DispatchOptions['origin']): boolean {
  if (typeof origin === 'string' && replicas.has(origin)) return true
  if (origin === undefined || origin === null) return false
  try {
    return replicas.has(new URL(String(origin)).origin)
  } catch {
    return false
  }
}

/** Wraps a bare dispatch function: `hedged(agent.dispatch.bind(agent), policy)`. */
export function hedged(dispatch: Dispatcher.Dispatch, policy: HedgePolicy | ResolvedPolicy, protocol?: Protocol): Dispatcher.Dispatch {
  return createHedgeInterceptor(policy, protocol)(dispatch)
}

function isResolved(policy: HedgePolicy | ResolvedPolicy): policy is ResolvedPolicy {
  return (
    typeof policy === 'object' &&
    policy !== null &&
    typeof policy.delay === 'object' &&
    'budget' in policy &&
    typeof (policy as ResolvedPolicy).budget === 'object'
  )
}
