/**
 * What a user deploys for one setting of a sweep, each as a file to paste:
 * a gRPC service config (gRPC targets), an Envoy route and the options of
 * hedgebench's own undici interceptor (HTTP targets). Every value comes from
 * the setting's run; what the tool could not know (the cluster's name, the
 * production origins, how the config reaches the client) is said beside it:
 * in a comment where the format has them, in a sibling notes file where it
 * has not (JSON).
 */
import { DEFAULT_BUDGET_BURST, TIED_DROPPED_STATUS } from '../hedging/policy.js'
import { grpcCodeName } from '../protocol/grpc-status.js'
import type { RunConfig } from '../results/run-result.js'
import type { SweepResult, SweepSetting } from '../results/sweep-result.js'

/** What the configs are written from: one setting of a sweep, with the run's config (the URLs, the call, the statuses). */
export interface DeploySetting {
  label: string
  delayMs: number
  /** The warm-up percentile the delay came from; null for a fixed delay. */
  percentile: number | null
  maxAttempts: number
  budgetPct: number | null
  config: RunConfig
}

export interface DeployFile {
  /** A file name, without a folder. */
  name: string
  text: string
}

/** The setting whose configs are written: `--emit-for LABEL`, else the recommended one; null when there is none. */
export function settingToEmit(sweep: SweepResult, recommended: string | null, emitFor?: string): DeploySetting | null {
  const label = emitFor ?? recommended
  const setting = label === null ? undefined : sweep.settings.find((s) => s.label === label)
  return setting ? deploySetting(sweep, setting) : null
}

/** A sweep's setting as the configs read it (the one place that knows the sweep's shape): its hedging, the sweep's run config. */
export function deploySetting(sweep: SweepResult, setting: SweepSetting): DeploySetting {
  return {
    label: setting.label,
    delayMs: setting.delayMs,
    percentile: setting.percentile,
    maxAttempts: setting.maxAttempts,
    budgetPct: setting.budgetPct,
    config: sweep.run.config,
  }
}

/** The files for one setting: gRPC runs get the service config, HTTP runs the interceptor; both get the Envoy route. */
export function deployFiles(setting: DeploySetting): DeployFile[] {
  const cfg = setting.config
  const header = `hedgebench sweep, setting ${setting.label}: hedge delay ${round3(setting.delayMs)} ms, ${setting.maxAttempts} attempts at most, budget ${setting.budgetPct === null ? 'none' : `${setting.budgetPct} %`}`
  const files = cfg.grpc ? grpcFiles(header, [{ call: cfg.grpc.call, setting }]) : [{ name: 'hedge-interceptor.mjs', text: interceptorModule(header, setting) }]
  return [...files, { name: 'envoy-route.yaml', text: envoyRoute(header, setting) }]
}

/** A method and the setting its methodConfig hedges with (a mix's sweep: each its own, sweep-targets.ts). */
export interface MethodSetting {
  /** `package.Service/Method`. */
  call: string
  setting: DeploySetting
}

/** The gRPC service config with a methodConfig per method, and its notes (`notes`: lines said after the header, as why a target has none). */
export function grpcFiles(header: string, methods: readonly MethodSetting[], notes: readonly string[] = []): DeployFile[] {
  return [
    { name: 'grpc-service-config.json', text: `${JSON.stringify(grpcServiceConfigOf(methods), null, 2)}\n` },
    { name: 'grpc-service-config.notes.txt', text: grpcNotes(header, methods, notes) },
  ]
}

/** ms as a protobuf JSON Duration ("0.045s"), to the microsecond, as gRPC and Envoy read one. */
export function protoDuration(ms: number): string {
  const seconds = (Math.max(0, ms) / 1000).toFixed(6).replace(/\.?0+$/, '')
  return `${seconds}s`
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000

/** The run's non-fatal statuses without the one --tied adds (a tie's dropped copy, not the server's answer). */
function nonFatal(cfg: RunConfig): number[] {
  return cfg.hedge.nonFatalStatus.filter((s) => !(cfg.hedge.tied && s === TIED_DROPPED_STATUS))
}

/** `package.Service/Method` as methodConfig names it. */
function methodName(call: string): { service: string; method: string } {
  const slash = call.lastIndexOf('/')
  return { service: call.slice(0, slash), method: call.slice(slash + 1) }
}

export function grpcServiceConfig(setting: DeploySetting): Record<string, unknown> {
  return grpcServiceConfigOf([{ call: setting.config.grpc!.call, setting }])
}

/** One methodConfig per method, each with its own setting's hedgingPolicy; the channel-wide retryThrottling from the first's budget (a sweep's settings share it). */
export function grpcServiceConfigOf(methods: readonly MethodSetting[]): Record<string, unknown> {
  const budget = methods[0]!.setting.budgetPct
  return {
    // Hedges to the replica the original is on buy nothing: grpc-js's default, pick_first, sends every call to one.
    loadBalancingConfig: [{ round_robin: {} }],
    methodConfig: methods.map(({ call, setting }) => ({
      name: [methodName(call)],
      hedgingPolicy: {
        maxAttempts: setting.maxAttempts,
        hedgingDelay: protoDuration(setting.delayMs),
        nonFatalStatusCodes: nonFatal(setting.config).map(grpcCodeName),
      },
    })),
    ...(budget !== null && budget > 0 ? { retryThrottling: { maxTokens: DEFAULT_BUDGET_BURST, tokenRatio: round3(budget / 100) } } : {}),
  }
}

function grpcNotes(header: string, methods: readonly MethodSetting[], notes: readonly string[]): string {
  const setting = methods[0]!.setting
  const one = methods.length === 1
  const lines = [
    header,
    ...notes.map((n) => `- ${n}`),
    '',
    'grpc-service-config.json is a gRPC service config (gRFC A6 hedging), for a gRPC client that hedges:',
    "- where it goes: the channel's default service config (grpc-js: the channel option",
    '  "grpc.service_config" with "grpc.enable_retries": 1; grpc-java: defaultServiceConfig(map) with',
    '  enableRetry()), or the service config your name resolver returns (a DNS TXT record, xDS).',
    one
      ? `- methodConfig names ${methods[0]!.call}, the method the sweep called; other methods are not hedged.`
      : `- a methodConfig per method the sweep called (${methods.map((m) => m.call).join(', ')}), each its own hedgingPolicy; other methods are not hedged.`,
    '- loadBalancingConfig round_robin: a hedge goes to another replica only if the channel balances',
    '  over several (pick_first, the default, sends every attempt to one). Drop it if your resolver',
    '  or xDS chooses the policy.',
    ...(one
      ? [`- hedgingDelay ${protoDuration(setting.delayMs)} ${percentileNote(setting)}`]
      : methods.map(({ call, setting: own }) => `- ${call}: hedgingDelay ${protoDuration(own.delayMs)} ${percentileNote(own, 'its own')}`)),
    "- nonFatalStatusCodes: the run's --non-fatal-status; an answer with one of them sends the next",
    '  hedge at once. Only codes your method returns when another replica could answer belong here.',
    '',
    'What the client does differently from hedgebench (which measured this setting):',
    "- retryThrottling is gRPC's failure throttle, not a hedge budget: its tokens fall on failed calls,",
    '  not on hedges sent. It is written from --hedge-budget as the nearest thing, and grpc-js does not',
    '  apply it to hedges at all (it throttles retries only), so with grpc-js hedges are not capped.',
    '- grpc-js has no previous-host exclusion: with round_robin a hedge can land on the replica its',
    '  original is waiting on.',
    '- grpc-js commits to the first attempt that sends response headers: a server that sends headers',
    '  and then stalls is never hedged.',
    '- gRPC C-core (C++, Python, Ruby, PHP, C#) and grpc-go parse hedgingPolicy but do not hedge;',
    '  grpc-java and grpc-js do. `hedgebench sweep ... --verify` runs this file through grpc-js on the',
    "  same replicas and reports how far its result is from hedgebench's.",
    '',
  ]
  return lines.join('\n')
}

function percentileNote(setting: DeploySetting, whose = "the sweep's"): string {
  return setting.percentile === null
    ? 'is the delay as given to the sweep.'
    : `was the p${setting.percentile} of ${whose} warm-up, written as a fixed delay: if your service's latency drifts, so does the fraction of calls hedged.`
}

/** Envoy retry-on names for the run's non-fatal statuses (HTTP statuses go to retriable_status_codes). */
const ENVOY_GRPC_RETRY_ON: Record<string, string> = {
  CANCELLED: 'cancelled',
  DEADLINE_EXCEEDED: 'deadline-exceeded',
  INTERNAL: 'internal',
  RESOURCE_EXHAUSTED: 'resource-exhausted',
  UNAVAILABLE: 'unavailable',
}

function envoyRetryOn(cfg: RunConfig): { retryOn: string[]; statusCodes: number[]; unmapped: string[] } {
  const codes = nonFatal(cfg)
  if (!cfg.grpc)
    return { retryOn: ['connect-failure', 'refused-stream', ...(codes.length > 0 ? ['retriable-status-codes'] : [])], statusCodes: codes, unmapped: [] }
  const names = codes.map(grpcCodeName)
  const mapped = names.filter((n) => ENVOY_GRPC_RETRY_ON[n] !== undefined).map((n) => ENVOY_GRPC_RETRY_ON[n]!)
  return { retryOn: ['connect-failure', 'refused-stream', ...mapped], statusCodes: [], unmapped: names.filter((n) => ENVOY_GRPC_RETRY_ON[n] === undefined) }
}

/** A double-quoted YAML scalar (JSON's escaping is YAML's). */
const q = (s: string): string => JSON.stringify(s)

/** One route of the Envoy config: what it matches (a YAML `match` body, its lines) and the setting it hedges with. */
export interface EnvoyRouteOf {
  match: string[]
  setting: DeploySetting
  /** Says which target it is, as a comment above it. */
  comment?: string
}

function envoyRoute(header: string, setting: DeploySetting): string {
  const cfg = setting.config
  const match = cfg.grpc ? `path: ${q(`/${cfg.grpc.call}`)}` : `prefix: ${q(routePrefix(cfg.urls[0]!))}`
  return envoyRoutes(header, [{ match: [match], setting }])
}

/**
 * An Envoy route configuration of one or more routes, each with its own
 * setting (a mix's sweep: a route per target, sweep-targets.ts); the
 * comments and the budget's are the first setting's, which every route
 * shares but for the delay and attempts; `notes` are said below the header.
 */
export function envoyRoutes(header: string, routes: readonly EnvoyRouteOf[], notes: readonly string[] = []): string {
  const setting = routes[0]!.setting
  const cfg = setting.config
  const { retryOn, statusCodes, unmapped } = envoyRetryOn(cfg)
  const budget = setting.budgetPct
  const lines = [
    `# ${header}`,
    ...notes.map((n) => `# ${n}`),
    '#',
    '# An Envoy route configuration (envoy.config.route.v3.RouteConfiguration): the route_config of',
    '# the http_connection_manager in front of your replicas, or the virtual host merged into yours.',
    '# What hedgebench could not know: the cluster of your replicas (your_replicas below), the domains',
    "# your clients call it by, and the route timeout of the whole request (Envoy's default is 15s;",
    '# hedges run inside it).',
    '# Envoy hedges when per_try_timeout passes (hedge_on_per_try_timeout) without cancelling the',
    `# attempt still running, up to num_retries extra attempts (the run's ${setting.maxAttempts} attempts,`,
    '# the original included); previous_hosts sends each to a replica not yet tried.',
    ...(unmapped.length > 0 ? [`# Not in retry_on (Envoy has no retry-on name for them): ${unmapped.join(', ')}.`] : []),
    ...(budget !== null && budget > 0
      ? [
          `# The run's hedge budget (${budget} % of requests) is a cluster setting in Envoy, where hedges count`,
          '# as retries: under your cluster (not this route),',
          '#   circuit_breakers:',
          '#     thresholds:',
          '#     - retry_budget:',
          `#         budget_percent: { value: ${budget} }`,
          '#         min_retry_concurrency: 3',
          '# It caps the retries in flight as a share of the requests in flight, not of requests sent.',
        ]
      : []),
    'virtual_hosts:',
    '- name: hedged',
    '  domains: ["*"]',
    '  hedge_policy:',
    '    hedge_on_per_try_timeout: true',
    '  routes:',
    ...routes.flatMap((r) => [
      ...(r.comment ? [`  # ${r.comment}`] : []),
      '  - match:',
      ...r.match.map((m) => `      ${m}`),
      '    route:',
      '      cluster: your_replicas',
      '      retry_policy:',
      `        retry_on: ${q(retryOn.join(','))}`,
      ...(statusCodes.length > 0 ? [`        retriable_status_codes: [${statusCodes.join(', ')}]`] : []),
      `        num_retries: ${Math.max(0, r.setting.maxAttempts - 1)}`,
      `        per_try_timeout: ${q(protoDuration(r.setting.delayMs))}`,
      '        retry_host_predicate:',
      '        - name: envoy.retry_host_predicates.previous_hosts',
      '          typed_config:',
      '            "@type": type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate',
      '        host_selection_retry_max_attempts: 3',
    ]),
    '',
  ]
  return lines.join('\n')
}

/** The sweep's URL path as the route's prefix ("/" for a bare origin). */
function routePrefix(url: string): string {
  try {
    return new URL(url).pathname || '/'
  } catch {
    return '/'
  }
}

/** The options of createHedgeInterceptor, as a module a Node service imports. */
export function interceptorOptions(setting: DeploySetting): Record<string, unknown> {
  const cfg = setting.config
  return {
    delay: round3(setting.delayMs),
    maxAttempts: setting.maxAttempts,
    budgetPct: setting.budgetPct,
    nonFatalStatus: nonFatal(cfg),
    replicas: [...new Set(cfg.urls.map(originOf))],
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin
  } catch {
    return url
  }
}

function interceptorModule(header: string, setting: DeploySetting): string {
  const options = JSON.stringify(interceptorOptions(setting), null, 2)
  const lines = [
    `// ${header}`,
    '//',
    "// The options of hedgebench's undici interceptor (docs/library.md), for a Node service that calls",
    '// these replicas with undici:',
    '//',
    "//   import { Agent } from 'undici'",
    "//   import { createHedgeInterceptor } from 'hedgebench'",
    "//   import { hedgePolicy } from './hedge-interceptor.mjs'",
    '//   const agent = new Agent().compose(createHedgeInterceptor(hedgePolicy))',
    '//',
    '// What hedgebench could not know: replicas are the origins this sweep measured; put your',
    '// production origins there (only requests to one of them are hedged).',
    ...(setting.percentile === null
      ? []
      : [
          `// delay was the p${setting.percentile} of the sweep's warm-up, fixed here; RollingPercentileDelay (exported`,
          `// by hedgebench) tracks a p${setting.percentile} that drifts.`,
        ]),
    `export const hedgePolicy = ${options}`,
    '',
  ]
  return lines.join('\n')
}
