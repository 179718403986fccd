/**
 * `hedgebench sweep … --verify`: the chosen gRPC setting once more, on the
 * same replicas, as hedgebench hedges it and then through grpc-js with the
 * service config the sweep wrote (the `--hedge-by grpc-js` phase), so the
 * report can say how far the real client is from hedgebench at that setting.
 */
import { UsageError } from '../core/errors.js'
import { isGrpcUrl } from '../core/target-url.js'
import type { RunResult } from '../results/run-result.js'
import type { ServiceConfig } from '../protocol/grpc-service-config.js'
import { run } from './run.js'
import type { SweepOptions } from './sweep.js'
import type { TargetSpec } from './target-spec.js'

/** --verify runs a real gRPC client: for HTTP targets there is none to run, said before the sweep starts. */
export function checkVerifiable(urls: readonly string[]): void {
  if (urls.length === 0 || !urls.every((u) => isGrpcUrl(u))) {
    throw new UsageError('--verify runs the chosen setting through grpc-js: it applies to grpc:// targets only')
  }
}

/**
 * A mix of methods (--targets): target `index`'s method alone, as a run of
 * one call (its message and metadata), at its setting, then through
 * grpc-js with the mix's service config (which has its methodConfig).
 */
export function verifyTarget(
  base: SweepOptions,
  index: number,
  setting: { delayMs: number; maxAttempts: number; budgetPct: number | null },
  serviceConfig: ServiceConfig,
): Promise<RunResult> {
  const { targets, ...rest } = base
  const target = (targets as TargetSpec[])[index]!
  // The method alone renders a message's template actions per call as the mix did (-d).
  const data = target.messageText ?? (target.message === undefined ? undefined : JSON.stringify(target.message))
  const message = data === undefined ? {} : { data }
  const headers = [...(rest.headers ?? []), ...(target.headers ?? [])]
  return verifySetting({ ...rest, headers, grpc: { ...rest.grpc, call: target.call!, ...message } }, setting, serviceConfig)
}

/** A hedged phase at the setting's delay, then the same calls through grpc-js with `serviceConfig`. */
/** `setting`: the one the service config was written for (its delay, attempts and budget). */
export function verifySetting(
  base: SweepOptions,
  setting: { delayMs: number; maxAttempts: number; budgetPct: number | null },
  serviceConfig: ServiceConfig,
): Promise<RunResult> {
  checkVerifiable(base.urls)
  const { delays: _delays, maxAttempts: _attempts, budgets: _budgets, ...rest } = base
  return run({
    ...rest,
    mode: 'hedged',
    hedge: { ...base.hedge, delay: setting.delayMs, maxAttempts: setting.maxAttempts, budgetPct: setting.budgetPct as number },
    grpc: { ...base.grpc, hedgeBy: 'grpc-js', serviceConfig },
  })
}
