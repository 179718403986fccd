/**
 * Which Protocol (src/protocol/) a run speaks, from its settings: the one
 * place a new protocol is chosen (by the targets' URL scheme).
 */
import type { Protocol, RequestSpec } from '../protocol/protocol.js'
import { httpProtocol } from '../protocol/http.js'
import { grpcProtocol } from '../protocol/grpc.js'
import { isIdempotentMethod } from '../hedging/policy.js'
import type { ResolvedRun } from './resolve-options.js'
import { grpcSafeToRepeat } from './grpc-target.js'
import type { ResolvedTarget } from './target-spec.js'

export function protocolFor(cfg: ResolvedRun): Protocol {
  if (cfg.grpc) return grpcProtocol(cfg.grpc.path, cfg.grpc.maxRecvBytes)
  return httpProtocol(cfg.http2)
}

/** The run's request, as every protocol reads it; `target`: one target of a mix in its place (its method, headers, body and own safety). */
export function requestSpec(cfg: ResolvedRun, target?: ResolvedTarget): RequestSpec {
  const headers: string[] = []
  for (const [name, value] of target?.headers ?? cfg.headers) headers.push(name, value)
  return {
    method: target?.method ?? cfg.method,
    headers,
    body: target ? target.body : cfg.body,
    timeoutMs: cfg.timeoutMs,
    keepAlive: cfg.keepAlive,
    repeatable:
      target?.repeatable ??
      ((cfg.grpc ? grpcSafeToRepeat(cfg.grpc) !== null : isIdempotentMethod(cfg.method)) ||
        cfg.hedge.idempotencyKey ||
        cfg.hedge.unsafeHedge ||
        cfg.headers.some(([n]) => n.toLowerCase() === 'idempotency-key')),
  }
}
