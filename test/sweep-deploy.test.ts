/**
 * What a sweep hands over, on the simulated replicas: the configs to deploy
 * for a setting (a gRPC service config grpc-js accepts, an Envoy route whose
 * YAML parses to Envoy's field names and types, the interceptor's options its
 * own check accepts), --verify's grpc-js run of that setting beside
 * hedgebench's, the CSV and HTML of the frontier, and the CLI's saved files.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Client, credentials } from '@grpc/grpc-js'
import { parse as parseYaml } from 'yaml'
import { spawnTarget, type Target } from '../src/sim/target.js'
import { SIM_PROTO, SIM_WORK_CALL } from '../src/sim/grpc-replica.js'
import { sweep } from '../src/run/sweep.js'
import { verifySetting } from '../src/run/sweep-verify.js'
import { sweepFrontier } from '../src/report/sweep-frontier.js'
import { deployFiles, deploySetting, grpcServiceConfig, protoDuration, settingToEmit, type DeployFile } from '../src/report/deploy-config.js'
import { renderSweepCsv, SWEEP_CSV_COLUMNS } from '../src/report/sweep-csv.js'
import { renderSweepHtml } from '../src/report/sweep-html.js'
import { renderVerifyText, verifyFigures } from '../src/report/sweep-verify-text.js'
import { checkPolicy } from '../src/hedging/policy-check.js'
import { createHedgeInterceptor } from '../src/engine/hedge-interceptor.js'
import type { SweepResult } from '../src/results/sweep-result.js'
import { UsageError } from '../src/core/errors.js'
import { parseCsv } from './helpers/csv.js'
import { runMainCases } from './helpers/main-cases.js'

let http: Target
let grpc: Target
let httpSweep: SweepResult
let grpcSweep: SweepResult
const grpcOptions = () => ({
  urls: grpc.urls,
  grpc: { proto: SIM_PROTO, call: SIM_WORK_CALL },
  requests: 40,
  warmup: 20,
  concurrency: 2,
  seed: 5,
  hedge: { budgetPct: 20 },
})
const dir = mkdtempSync(join(tmpdir(), 'hedgebench-sweep-deploy-'))

before(async () => {
  // One call in ten stalls 100 ms: a 30 ms delay hedges them (grpc-js has something to hedge under --verify), and no stall is long enough to slow the file.
  const model = { base: { type: 'uniform' as const, min: 3, max: 6 }, stalls: [{ type: 'independent' as const, probability: 0.1, ms: 100 }] }
  ;[http, grpc] = await Promise.all([
    spawnTarget({ profile: { name: 'http-stalls', description: 'stalls', replicas: 2, seed: 3, file: null, model }, seed: 3 }),
    spawnTarget({ profile: { name: 'grpc-stalls', description: 'stalls', replicas: 2, seed: 3, file: null, model }, grpc: true }),
  ])
  ;[httpSweep, grpcSweep] = await Promise.all([
    sweep({ urls: http.urls, delays: [30, 'p90'], requests: 60, warmup: 40, concurrency: 2, seed: 3, hedge: { nonFatalStatus: [503] } }),
    sweep({ ...grpcOptions(), delays: [30, 45.5] }),
  ])
})
after(async () => {
  await Promise.all([http?.close(), grpc?.close()])
  rmSync(dir, { recursive: true, force: true })
})

const file = (files: DeployFile[], name: string): string => {
  const f = files.find((x) => x.name === name)
  assert.ok(f, `${name} among ${files.map((x) => x.name).join(', ')}`)
  return f.text
}

test('a delay as a protobuf Duration, to the microsecond', () => {
  assert.equal(protoDuration(45), '0.045s')
  assert.equal(protoDuration(45.5), '0.0455s')
  assert.equal(protoDuration(1500), '1.5s')
  assert.equal(protoDuration(2000), '2s')
  assert.equal(protoDuration(0.0004), '0s')
})

test('the setting to emit: --emit-for wins, else the recommended one, else none', () => {
  assert.equal(settingToEmit(httpSweep, null)?.label, undefined)
  assert.equal(settingToEmit(httpSweep, '30ms')?.label, '30ms')
  assert.equal(settingToEmit(httpSweep, '30ms', 'p90')?.label, 'p90')
  assert.equal(settingToEmit(httpSweep, null, 'p12'), null)
})

test("gRPC: the service config names the called method, the delay as a Duration, the run's codes and budget; grpc-js accepts it and refuses it broken", () => {
  const setting = deploySetting(grpcSweep, grpcSweep.settings[1]!)
  const files = deployFiles(setting)
  assert.deepEqual(files.map((f) => f.name).sort(), ['envoy-route.yaml', 'grpc-service-config.json', 'grpc-service-config.notes.txt'])
  const config = JSON.parse(file(files, 'grpc-service-config.json')) as {
    methodConfig: Array<{ name: unknown; hedgingPolicy: Record<string, unknown> }>
    retryThrottling?: unknown
    loadBalancingConfig: unknown
  }
  assert.equal(JSON.stringify(config), JSON.stringify(grpcServiceConfig(setting)))
  const [service, method] = SIM_WORK_CALL.split('/')
  assert.deepEqual(config.methodConfig[0].name, [{ service, method }])
  assert.deepEqual(config.methodConfig[0].hedgingPolicy, { maxAttempts: 2, hedgingDelay: '0.0455s', nonFatalStatusCodes: ['UNAVAILABLE'] })
  assert.deepEqual(config.retryThrottling, { maxTokens: 10, tokenRatio: 0.2 })
  assert.deepEqual(config.loadBalancingConfig, [{ round_robin: {} }])
  // As --hedge-by grpc-js loads it: grpc-js parses and validates the service config when the channel is made.
  const load = (c: unknown) =>
    new Client('ipv4:127.0.0.1:1', credentials.createInsecure(), { 'grpc.service_config': JSON.stringify(c), 'grpc.enable_retries': 1 }).close()
  load(config)
  const broken = structuredClone(config)
  broken.methodConfig[0].hedgingPolicy.hedgingDelay = '45ms'
  assert.throws(() => load(broken), /hedgingDelay|duration/i)
  const notes = file(files, 'grpc-service-config.notes.txt')
  for (const said of [/grpc\.service_config/, /does not\s+apply it to hedges/, /previous-host exclusion/, /C-core .* do not hedge/s, /grpc-go/, /--verify/])
    assert.match(notes, said)
})

/** Envoy's v3 route fields this file uses, with their types (envoy/config/route/v3/route_components.proto). */
type FieldType = 'string' | 'uint' | 'bool' | 'duration' | `list:${string}` | `msg:${string}` | 'any'
const ENVOY: Record<string, Record<string, FieldType>> = {
  RouteConfiguration: { virtual_hosts: 'list:msg:VirtualHost' },
  VirtualHost: { name: 'string', domains: 'list:string', routes: 'list:msg:Route', hedge_policy: 'msg:HedgePolicy', retry_policy: 'msg:RetryPolicy' },
  HedgePolicy: { hedge_on_per_try_timeout: 'bool' },
  Route: { name: 'string', match: 'msg:RouteMatch', route: 'msg:RouteAction' },
  RouteMatch: { prefix: 'string', path: 'string' },
  RouteAction: { cluster: 'string', retry_policy: 'msg:RetryPolicy', hedge_policy: 'msg:HedgePolicy', timeout: 'duration' },
  RetryPolicy: {
    retry_on: 'string',
    num_retries: 'uint',
    per_try_timeout: 'duration',
    retry_host_predicate: 'list:msg:RetryHostPredicate',
    host_selection_retry_max_attempts: 'uint',
    retriable_status_codes: 'list:uint',
  },
  RetryHostPredicate: { name: 'string', typed_config: 'any' },
}
/** x-envoy-retry-on and x-envoy-retry-grpc-on conditions. */
const RETRY_ON = new Set([
  '5xx',
  'gateway-error',
  'reset',
  'connect-failure',
  'envoy-ratelimited',
  'retriable-4xx',
  'refused-stream',
  'retriable-status-codes',
  'retriable-headers',
  'http3-post-connect-failure',
  'cancelled',
  'deadline-exceeded',
  'internal',
  'resource-exhausted',
  'unavailable',
])

function checkEnvoy(value: unknown, type: FieldType, path: string): void {
  const fail = (want: string) => assert.fail(`${path}: ${JSON.stringify(value)} is not ${want}`)
  if (type === 'string') return void (typeof value === 'string' || fail('a string'))
  if (type === 'uint') return void ((Number.isInteger(value) && (value as number) >= 0) || fail('an unsigned integer'))
  if (type === 'bool') return void (typeof value === 'boolean' || fail('a bool'))
  if (type === 'duration') return void ((typeof value === 'string' && /^\d+(\.\d{1,9})?s$/.test(value)) || fail('a Duration such as "0.045s"'))
  if (type === 'any')
    return void ((typeof value === 'object' && value !== null && typeof (value as Record<string, unknown>)['@type'] === 'string') || fail('an Any with @type'))
  if (type.startsWith('list:')) {
    if (!Array.isArray(value)) return fail('a list')
    for (const [i, v] of value.entries()) checkEnvoy(v, type.slice(5) as FieldType, `${path}[${i}]`)
    return
  }
  const message = type.slice(4)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(`a ${message}`)
  for (const [key, v] of Object.entries(value)) {
    const field = ENVOY[message]![key]
    assert.ok(field, `${path}.${key}: ${message} has no field ${key}`)
    checkEnvoy(v, field, `${path}.${key}`)
  }
}

interface EnvoyRetryPolicy {
  retry_on: string
  num_retries: number
  per_try_timeout: string
  retry_host_predicate: Array<{ name: string }>
  retriable_status_codes?: number[]
}
interface EnvoyVirtualHost {
  hedge_policy: unknown
  routes: Array<{ match: { path?: string; prefix?: string }; route: { retry_policy: EnvoyRetryPolicy } }>
}

function envoyRoute(files: DeployFile[]): { text: string; vh: EnvoyVirtualHost; policy: EnvoyRetryPolicy } {
  const text = file(files, 'envoy-route.yaml')
  const doc = parseYaml(text) as { virtual_hosts: EnvoyVirtualHost[] }
  checkEnvoy(doc, 'msg:RouteConfiguration', 'route_config')
  const vh = doc.virtual_hosts[0]!
  return { text, vh, policy: vh.routes[0]!.route.retry_policy }
}

test("the Envoy route parses as YAML to Envoy's field names and types: hedge on the per-try timeout, retries from the attempts, previous hosts", () => {
  const grpcSetting = deploySetting(grpcSweep, grpcSweep.settings[1]!)
  const { vh, policy, text } = envoyRoute(deployFiles(grpcSetting))
  assert.deepEqual(vh.hedge_policy, { hedge_on_per_try_timeout: true })
  assert.equal(vh.routes[0].match.path, `/${SIM_WORK_CALL}`)
  assert.equal(policy.per_try_timeout, '0.0455s')
  assert.equal(policy.num_retries, 1)
  assert.equal(policy.retry_host_predicate[0].name, 'envoy.retry_host_predicates.previous_hosts')
  for (const condition of policy.retry_on.split(',')) assert.ok(RETRY_ON.has(condition), condition)
  assert.match(policy.retry_on, /\bunavailable\b/)
  assert.match(text, /^# .*cluster of your replicas/m)
  assert.match(text, /^#\s+budget_percent: \{ value: 20 \}/m)

  const http = envoyRoute(deployFiles(deploySetting(httpSweep, httpSweep.settings[0]!)))
  assert.equal(http.vh.routes[0].match.prefix, '/')
  assert.deepEqual(http.policy.retriable_status_codes, [503])
  assert.match(http.policy.retry_on, /retriable-status-codes/)
  // The check itself refuses a misspelt field and a delay that is not a Duration.
  assert.throws(
    () => checkEnvoy({ virtual_hosts: [{ ...http.vh, hedge_policy: { hedge_on_per_try_timout: true } }] }, 'msg:RouteConfiguration', 'x'),
    /has no field hedge_on_per_try_timout/,
  )
  assert.throws(() => checkEnvoy({ per_try_timeout: '45ms' }, 'msg:RetryPolicy', 'x'), /Duration/)
})

test("HTTP: the interceptor's options, imported from the emitted module, pass its own check and make an interceptor", async () => {
  const setting = deploySetting(httpSweep, httpSweep.settings[1]!)
  const files = deployFiles(setting)
  assert.deepEqual(files.map((f) => f.name).sort(), ['envoy-route.yaml', 'hedge-interceptor.mjs'])
  const path = join(dir, 'hedge-interceptor.mjs')
  writeFileSync(path, file(files, 'hedge-interceptor.mjs'))
  const { hedgePolicy } = (await import(pathToFileURL(path).href)) as { hedgePolicy: Record<string, unknown> }
  assert.deepEqual(hedgePolicy, {
    delay: Math.round(setting.delayMs * 1000) / 1000,
    maxAttempts: 2,
    budgetPct: 10,
    nonFatalStatus: [503],
    replicas: http.urls.map((u) => new URL(u).origin),
  })
  checkPolicy(hedgePolicy)
  assert.equal(typeof createHedgeInterceptor(hedgePolicy as never), 'function')
  assert.throws(() => checkPolicy({ ...hedgePolicy, delay: '80ms' }), UsageError)
  assert.match(file(files, 'hedge-interceptor.mjs'), /^\/\/ .*RollingPercentileDelay/m, 'a percentile setting says the delay was fixed from it')
})

test("--verify: the chosen gRPC setting through grpc-js with the emitted config, on the same replicas, beside hedgebench's", async () => {
  const setting = deploySetting(grpcSweep, grpcSweep.settings[0]!)
  const config = JSON.parse(file(deployFiles(setting), 'grpc-service-config.json'))
  const run = await verifySetting({ ...grpcOptions(), delays: [] }, setting, config)
  assert.equal(run.config.grpc?.hedgeBy, 'grpc-js')
  assert.equal(run.grpcClient?.asked.hedgingDelayMs, 30)
  assert.equal(run.phases.hedged?.hedging?.delayMs, 30)
  assert.equal(run.phases.plain, undefined)
  const f = verifyFigures(setting.label, run)!
  assert.equal(f.grpcJs.requests, 40)
  assert.equal(f.hedgebench.requests, 40)
  assert.equal(f.grpcJs.extraLoadPct, Math.round((run.grpcClient!.hedgesSent / 40) * 100 * 1000) / 1000)
  // Its budget (retryThrottling) was not applied to grpc-js's hedges: said as seen when it sent any.
  assert.equal(f.differences[1]!.seen, run.grpcClient!.hedgesSent > 0)
  // How far, with compare's interval: extra load as a Poisson rate difference, in points.
  const load = f.gap.extraLoadPoints
  assert.ok(Math.abs(load.value - (f.grpcJs.extraLoadPct - f.hedgebench.extraLoadPct)) < 1e-9)
  assert.ok(load.interval && load.interval[0] <= load.value && load.value <= load.interval[1], `${load.value} in ${load.interval}`)
  const text = renderVerifyText(setting.label, run)
  assert.match(text, /extra load: .*, [+-][\d.]+ points \[[+-][\d.]+, [+-][\d.]+\]: (a difference beyond noise|within noise)/)
  assert.match(text, /p99: grpc-js .* against .*, [+-]/)
  assert.match(text, /^Verified 30ms through grpc-js/)
  assert.match(text, /extra load: grpc-js [\d.]+ % against hedgebench's [\d.]+ %/)
  for (const d of [/previous-host exclusion/, /not applied to hedges/, /header commit/]) assert.match(text, d)
  assert.throws(() => verifySetting({ urls: http.urls, delays: [] }, setting, config), /applies to grpc:\/\/ targets only/)
})

test("CSV: one row per setting, the frontier's columns; HTML: the frontier chart, the plain lane and each setting a point with its intervals", () => {
  const frontier = sweepFrontier(httpSweep, 5)
  const rows = parseCsv(renderSweepCsv(httpSweep, frontier))
  assert.deepEqual(rows[0], [...SWEEP_CSV_COLUMNS])
  assert.deepEqual(
    rows.slice(1).map((r) => r[0]),
    ['30ms', 'p90'],
  )
  const col = (name: string) => SWEEP_CSV_COLUMNS.indexOf(name as never)
  for (const [i, r] of rows.slice(1).entries()) {
    assert.equal(Number(r[col('extra_load_pct')]), frontier.rows[i]!.extraLoadPct.value)
    assert.equal(Number(r[col('extra_load_pct_high')]), frontier.rows[i]!.extraLoadPct.interval![1])
    assert.equal(Number(r[col('p99_ms')]), frontier.rows[i]!.p99.value)
    assert.equal(r[col('on_frontier')], String(frontier.rows[i]!.onFrontier))
  }
  const html = renderSweepHtml(httpSweep, frontier)
  assert.match(html, /<svg data-chart="sweep-frontier-p99"/)
  for (const id of ['plain', 'setting:30ms', 'setting:p90']) {
    assert.match(html, new RegExp(`data-markers="${id}"`))
    assert.match(html, new RegExp(`data-series="${id}:intervals"`), 'its intervals, a whisker series')
  }
  // A lane's extra-load interval is a horizontal whisker: a second stroke, from low to high at its p99.
  const row = frontier.rows[0]!
  assert.ok(row.extraLoadPct.interval, 'an extra-load interval to draw')
  const d = /data-series="setting:30ms:intervals" d="([^"]*)"/.exec(html)![1]!
  const strokes = d
    .split('M')
    .slice(1)
    .map((m) =>
      m
        .trim()
        .split(/\s*L\s*/)
        .map((xy) => xy.split(',').map(Number)),
    )
  assert.equal(strokes.length, 2, d)
  const [from, to] = strokes[1]!
  assert.ok(from![1] === to![1] && from![0]! < to![0]!, `horizontal: ${d}`)
  assert.ok(html.includes(frontier.recommendation.sentence.replaceAll("'", '&#39;').slice(0, 20)))
  assert.doesNotMatch(html, /<script/)
})

test('CLI: -o csv on stdout, the sweep saved with the configs for --emit-for; gRPC --verify; refusals are one line and exit 2', () => {
  const out = join(dir, 'cli')
  const args = ['sweep', ...http.urls, '--hedge-delay', '40ms,80ms', '-n', '30', '--warmup', '20', '--seed', '4', '--out-dir', out]
  const cases = [
    { args: [...args, '-o', 'csv', '--emit-for', '80ms'], cwd: dir },
    { args: [...args, '--verify'], cwd: dir },
    { args: [...args, '--emit-for', 'p12'], cwd: dir },
    { args: [...args, '--emit-for', '80ms', '--no-save'], cwd: dir },
  ]
  const rpcOut = join(dir, 'cli-grpc')
  const rpcArgs = [
    'sweep',
    ...grpc.urls,
    '--proto',
    SIM_PROTO,
    '--call',
    SIM_WORK_CALL,
    '--hedge-delay',
    '30ms',
    '-n',
    '30',
    '--warmup',
    '20',
    '--seed',
    '4',
    '--out-dir',
    rpcOut,
  ]
  const [ok, ...rest] = runMainCases([...cases, { args: [...rpcArgs, '-o', 'json', '--verify', '--emit-for', '30ms'], cwd: dir }])
  const refused = rest.slice(0, -1)
  const rpc = rest.at(-1)!
  assert.equal(ok!.code, 0, ok!.stderr)
  assert.deepEqual(
    parseCsv(ok!.stdout).map((r) => r[0]),
    ['setting', '40ms', '80ms'],
  )
  const saved = readdirSync(out).sort()
  assert.equal(saved.length, 3, saved.join(', '))
  const deployDir = saved.find((n) => n.endsWith('-sweep-deploy'))!
  assert.deepEqual(readdirSync(join(out, deployDir)).sort(), ['envoy-route.yaml', 'hedge-interceptor.mjs'])
  assert.match(readFileSync(join(out, deployDir, 'envoy-route.yaml'), 'utf8'), /per_try_timeout: "0\.08s"/)
  assert.match(ok!.stderr, /configs to deploy for 80ms: /)
  const json = JSON.parse(readFileSync(join(out, saved.find((n) => n.endsWith('-sweep.json'))!), 'utf8'))
  assert.deepEqual(
    json.frontier.rows.map((r: { label: string }) => r.label),
    ['40ms', '80ms'],
  )
  for (const [i, r] of refused.entries()) {
    assert.equal(r.code, 2, `${cases[i + 1]!.args.join(' ')}: ${r.stderr}`)
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr)
  }
  assert.match(refused[0]!.stderr, /--verify .*grpc:\/\/ targets only/)
  assert.match(refused[1]!.stderr, /--emit-for "p12" is not one of the settings \(40ms, 80ms\)/)
  assert.match(refused[2]!.stderr, /--emit-for .*drop --no-save/)
  // Nothing more was written by the refused ones: they stopped before the sweep.
  assert.equal(readdirSync(out).length, 3)

  // gRPC --verify through the CLI: the JSON carries the verifying run, grpc-js's phase in it; the text went to stderr.
  assert.equal(rpc.code, 0, rpc.stderr)
  const verified = JSON.parse(rpc.stdout) as {
    verification: { label: string; result: { grpcClient: { requests: number; asked: { hedgingDelayMs: number } } } }
  }
  assert.equal(verified.verification.label, '30ms')
  assert.equal(verified.verification.result.grpcClient.requests, 30)
  assert.equal(verified.verification.result.grpcClient.asked.hedgingDelayMs, 30)
  assert.match(rpc.stderr, /^Verified 30ms through grpc-js/m)
  const rpcDeploy = readdirSync(rpcOut).find((n) => n.endsWith('-sweep-deploy'))!
  assert.deepEqual(readdirSync(join(rpcOut, rpcDeploy)).sort(), ['envoy-route.yaml', 'grpc-service-config.json', 'grpc-service-config.notes.txt'])
})
