/**
 * What `hedgebench demo` measured: one RunResult per concurrency (and
 * protocol, when the demo compares them), rendered by report/demo-text.ts.
 */
import type { RunResult } from './run-result.js'

/** What a demo run spoke: set when the demo compares protocols. */
export type DemoProtocol = 'HTTP/1.1' | 'h2c'

export interface DemoResult {
  profile: string
  runs: Array<{ concurrency: number; result: RunResult; protocol?: DemoProtocol }>
}
