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
  return (dispatch) =>
    function hedgedDispatch(opts, handler) {
      new HedgedRequest(dispatch, opts, handler as HedgeCaller, resolved, protocol).start()
      return true
    }
}

/** Wraps a bare dispatch function: `hedged(agent.dispatch.bind(agent), policy)`. */
export function hedged(dispatch: Dispatcher.Dispatch, policy: HedgePolicy | ResolvedPolicy, protocol?: Protocol): Dispatcher.Dispatch {
  return createHedgeInterceptor(policy, protocol)(dispatch)
}

function isResolved(policy: HedgePolicy | ResolvedPolicy): policy is ResolvedPolicy {
  return typeof policy.delay === 'object' && 'budget' in policy && typeof (policy as ResolvedPolicy).budget === 'object'
}
