/**
 * Which Protocol (src/protocol/) a run speaks, from its settings: the one
 * place a new protocol is chosen (by the targets' URL scheme).
 */
import type { Protocol, RequestSpec } from '../protocol/protocol.js'
import { httpProtocol } from '../protocol/http.js'
import { grpcProtocol } from '../protocol/grpc.js'
import { isIdempotentMethod } from '../hedging/policy.js'
import type { ResolvedRun } from './resolve-options.js'

export function protocolFor(cfg: ResolvedRun): Protocol {
  if (cfg.grpc) return grpcProtocol(cfg.grpc.path, cfg.grpc.maxRecvBytes)
  return httpProtocol(cfg.http2)
}

/** The run's request, as every protocol reads it. */
export function requestSpec(cfg: ResolvedRun): RequestSpec {
  const headers: string[] = []
  for (const [name, value] of cfg.headers) headers.push(name, value)
  return {
    method: cfg.method,
    headers,
    body: cfg.body,
    timeoutMs: cfg.timeoutMs,
    keepAlive: cfg.keepAlive,
    repeatable:
      isIdempotentMethod(cfg.method) || cfg.hedge.idempotencyKey || cfg.hedge.unsafeHedge || cfg.headers.some(([n]) => n.toLowerCase() === 'idempotency-key'),
  }
}
