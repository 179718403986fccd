/**
 * A gRPC service config (gRFC A6's methodConfig, hedgingPolicy,
 * retryThrottling) as grpc-js reads it, the parts hedgebench looks at: what
 * `--hedge-by grpc-js` gives the real client, and what a sweep emits and
 * --verify loads. Declared here, below the run, so that the library's
 * options (run/run-options.ts) and the run's gRPC target both name it.
 */
/** A gRPC service config as grpc-js reads it (the parts hedgebench looks at). */
export interface ServiceConfig {
  loadBalancingConfig?: Array<Record<string, unknown>>
  loadBalancingPolicy?: string
  methodConfig?: Array<{ name?: Array<{ service?: string; method?: string }>; hedgingPolicy?: HedgingPolicy; retryPolicy?: unknown }>
  retryThrottling?: { maxTokens: number; tokenRatio: number }
}

export interface HedgingPolicy {
  maxAttempts?: number
  /** A JSON Duration, as gRPC writes it: "0.01s". */
  hedgingDelay?: string
  nonFatalStatusCodes?: Array<string | number>
}

/** The methodConfig grpc-js applies to a call (`/package.Service/Method`): its own name first, then a service-wide one, then a default one. */
export function methodConfigFor(config: ServiceConfig, path: string): NonNullable<ServiceConfig['methodConfig']>[number] | undefined {
  const [service, method] = path.slice(1).split('/') as [string, string]
  const configs = config.methodConfig ?? []
  return (
    configs.find((m) => (m.name ?? []).some((n) => n.service === service && (n.method === undefined || n.method === '' || n.method === method))) ??
    configs.find((m) => (m.name ?? []).some((n) => n.service === undefined || n.service === ''))
  )
}
