/** The grpc-js block's "Asked" line says what gRPC makes of a maxAttempts over its cap. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { grpcClientFacts } from '../src/report/grpc-client-text.js'
import type { GrpcClientResult } from '../src/results/run-result.js'

test('a service config maxAttempts over 5 is shown with what gRPC treats it as', () => {
  const g = {
    asked: { maxAttempts: 7, hedgingDelayMs: 10, nonFatalStatusCodes: [], retryThrottling: null, loadBalancing: 'round_robin' },
    requests: 10,
    attempts: 12,
    hedgesSent: 2,
    callsOverDelay: 2,
    winsByAttempt: { 0: 9, 1: 1 },
    perReplica: [],
    errors: 0,
    statusCodes: {},
    slow: { count: 0, thresholdMs: 1000 },
  } as unknown as GrpcClientResult
  const asked = (x: GrpcClientResult): string => grpcClientFacts(x).find(([label]) => label === 'Asked (service config)')![1]
  assert.match(asked(g), /^maxAttempts 7 \(gRPC treats it as 5\), hedgingDelay /)
  assert.match(asked({ ...g, asked: { ...g.asked, maxAttempts: 3 } }), /^maxAttempts 3, hedgingDelay /)
})
