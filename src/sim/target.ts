/**
 * Starting the built-in target, in this process (startTarget) or as a child
 * `hedgebench serve` process (spawnTarget). The load generator uses the
 * child: the replicas' timers then never share an event loop with the
 * client's measurements, so a stall in one cannot show up in the other.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import { UsageError } from '../core/errors.js'
import { isToken } from '../core/header-parse.js'
import { randomSeed } from '../core/random.js'
import { fetchStatsJson } from '../wire/stats.js'
import { createReplicaModels } from './latency-model.js'
import type { ReplicaModel } from './latency-model.js'
import { isProfilePath, loadProfile, MAX_REPLICAS, parseProfile } from './profile.js'
import type { Profile } from './profile.js'
import { CONTROL_PREFIX, DEFAULT_HEDGE_HEADER, Replica, SimulationState } from './replica-server.js'
import type { ServerStats } from './replica-server.js'

export type { ReplicaCounts, ReplicaStats, ServerStats } from './replica-server.js'
export { DEFAULT_HEDGE_HEADER } from './replica-server.js'

export interface TargetOptions {
  /** Built-in profile name, path to a profile file, or a parsed profile. */
  profile: string | Profile
  /** Default: the profile's `replicas`. */
  replicas?: number
  /** First port; replica i listens on port + i. 0 (default) = any free ports. */
  port?: number
  /** Default 127.0.0.1. */
  host?: string
  /** Default: the profile's seed, else a random one (reported in `seed`). */
  seed?: number
  /** Header whose presence marks a hedge. Default x-hedge-attempt. */
  hedgeHeader?: string
  /** Serve gRPC (the bundled service, proto/hedgebench-sim.proto) instead of HTTP: grpc:// URLs. */
  grpc?: boolean
}

export interface Target {
  urls: string[]
  /** GET it for ServerStats; reset lives beside it (resetServerStats). For gRPC: a replica's URL (fetchGrpcServerStats). */
  statsUrl: string
  profile: string
  seed: number
  close(): Promise<void>
}

interface Resolved {
  profile: Profile
  replicas: number
  port: number
  host: string
  seed: number
  hedgeHeader: string
  grpc: boolean
}

const BIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../../bin/hedgebench.js')
const SPAWN_TIMEOUT_MS = 15_000
const KILL_TIMEOUT_MS = 5_000

/** Checks options and fills defaults; every problem is a one-line UsageError. */
function resolveTargetOptions(options: TargetOptions): Resolved {
  const profile = typeof options.profile === 'string' ? loadProfile(options.profile) : checkedProfile(options.profile)
  const replicas = options.replicas ?? profile.replicas
  const port = options.port ?? 0
  const host = options.host ?? '127.0.0.1'
  const seed = options.seed ?? profile.seed ?? randomSeed()
  const hedgeHeader = options.hedgeHeader ?? DEFAULT_HEDGE_HEADER
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > MAX_REPLICAS) {
    throw new UsageError(`--replicas must be an integer between 1 and ${MAX_REPLICAS} (got ${options.replicas})`)
  }
  if (!Number.isInteger(port) || port < 0 || port + replicas - 1 > 65535) {
    throw new UsageError(`--port must be an integer between 0 and ${65536 - replicas} for ${replicas} replicas (got ${options.port})`)
  }
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new UsageError(`--seed must be an integer between 0 and 4294967295 (got ${seed})`)
  if (host.trim() === '') throw new UsageError('--host must not be empty')
  if (!isToken(hedgeHeader)) throw new UsageError(`--hedge-header must be a valid header name (got "${hedgeHeader}")`)
  return { profile, replicas, port, host, seed, hedgeHeader, grpc: options.grpc ?? false }
}

/** A profile built or changed in code is validated like a file. */
function checkedProfile(profile: Profile): Profile {
  const { file, ...json } = profile
  return { ...parseProfile(json, file ?? `profile "${profile.name}"`), file }
}

/** Starts the replicas in this process. */
export async function startTarget(options: TargetOptions): Promise<Target> {
  const o = resolveTargetOptions(options)
  const models = createReplicaModels(o.profile.model, o.replicas, o.seed, performance.now())
  const replicas = o.grpc ? await grpcReplicas(o, models) : httpReplicas(o, models)
  const close = async () => {
    await Promise.all(replicas.map((r) => r.close()))
  }
  const urls: string[] = []
  try {
    for (const [i, r] of replicas.entries()) urls.push(await r.listen(o.port === 0 ? 0 : o.port + i, o.host))
  } catch (err) {
    await close()
    throw listenError(err, o)
  }
  return { urls, statsUrl: o.grpc ? urls[0]! : statsUrlOf(urls[0]!), profile: o.profile.name, seed: o.seed, close }
}

interface Listener {
  listen(port: number, host: string): Promise<string>
  close(): Promise<void>
}

function httpReplicas(o: Resolved, models: ReplicaModel[]): Listener[] {
  const state = new SimulationState(o.profile.name, o.seed, o.hedgeHeader)
  return models.map((model, i) => new Replica(i, model, state))
}

/**
 * gRPC replicas count grpc-previous-rpc-attempts, the gRPC convention, rather
 * than --hedge-header. Loaded on demand: grpc-js is not needed to serve HTTP.
 */
async function grpcReplicas(o: Resolved, models: ReplicaModel[]): Promise<Listener[]> {
  const { GrpcReplica, GrpcSimulationState } = await import('./grpc-replica.js')
  const state = new GrpcSimulationState(o.profile.name, o.seed)
  return models.map((model, i) => new GrpcReplica(i, model, state))
}

function listenError(err: unknown, o: Resolved): Error {
  const e = err as NodeJS.ErrnoException
  if (e.code === 'EADDRINUSE') {
    // Node names the busy port (grpc-js does not): with several replicas it may not be the first.
    const busy = (e as { port?: number }).port
    return new UsageError(`cannot listen on ${o.host} from port ${o.port}: ${busy === undefined ? 'a port' : `port ${busy}`} is already in use`)
  }
  if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND' || e.code === 'EACCES') {
    return new UsageError(`cannot listen on ${o.host}:${o.port} (${e.code})`)
  }
  return e
}

/**
 * Starts `hedgebench serve` as a child process and resolves once it printed
 * its URLs. close() sends SIGTERM and waits (SIGKILL after a bound). The
 * child also exits if this process dies (it watches its stdin pipe).
 */
export async function spawnTarget(options: TargetOptions): Promise<Target> {
  const o = resolveTargetOptions(options)
  let tempDir: string | null = null
  let ref: string
  if (typeof options.profile === 'string') {
    ref = isProfilePath(options.profile) ? resolve(options.profile) : options.profile
  } else {
    // Always the object's own content: a caller may have changed a loaded profile.
    tempDir = mkdtempSync(join(tmpdir(), 'hedgebench-profile-'))
    ref = join(tempDir, 'profile.json')
    const { file: _file, ...json } = o.profile
    writeFileSync(ref, JSON.stringify(json))
  }
  const args = [BIN, 'serve', '--profile', ref, '--replicas', String(o.replicas), '--port', String(o.port), '--host', o.host]
  args.push('--seed', String(o.seed), '--hedge-header', o.hedgeHeader, '--exit-with-parent')
  if (o.grpc) args.push('--grpc')
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] })
  const cleanup = () => {
    if (tempDir) rmSync(tempDir, { recursive: true, force: true })
    tempDir = null
  }
  try {
    const urls = await readUrls(child, o.replicas)
    const close = async () => {
      await stopChild(child)
      cleanup()
    }
    return { urls, statsUrl: o.grpc ? urls[0]! : statsUrlOf(urls[0]!), profile: o.profile.name, seed: o.seed, close }
  } catch (err) {
    await stopChild(child)
    cleanup()
    throw err
  }
}

/** Reads `count` URL lines from the child's stdout, or fails with its stderr. */
function readUrls(child: ChildProcess, count: number): Promise<string[]> {
  return new Promise((resolvePromise, reject) => {
    const urls: string[] = []
    let stderr = ''
    child.stderr!.setEncoding('utf8')
    child.stderr!.on('data', (chunk: string) => {
      if (stderr.length < 8192) stderr += chunk
    })
    const lines = createInterface({ input: child.stdout! })
    const timer = setTimeout(() => fail(new Error(`hedgebench serve did not print its URLs within ${SPAWN_TIMEOUT_MS / 1000} s`)), SPAWN_TIMEOUT_MS)
    const done = () => {
      clearTimeout(timer)
      lines.removeAllListeners('line')
      child.off('exit', onExit)
      child.off('error', fail)
      child.stdout!.resume() // keep draining so the child never blocks on a full pipe
    }
    const fail = (err: Error) => {
      done()
      reject(err)
    }
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      const lines = stderr
        .trim()
        .split('\n')
        .filter((l) => l.trim() !== '')
      if (code === 2 && lines.length > 0) return fail(new UsageError(lines[0]!.replace(/^hedgebench: /, '')))
      // A crash: keep a few lines (a stack's first line is only its location).
      const detail = lines.slice(0, 6).join(' | ') || 'no output'
      fail(new Error(`hedgebench serve exited with ${code ?? signal} before printing its URLs: ${detail}`))
    }
    lines.on('line', (line) => {
      if (!/^(https?|grpc):\/\//.test(line.trim())) return
      urls.push(line.trim())
      if (urls.length === count) {
        done()
        resolvePromise(urls)
      }
    })
    child.once('exit', onExit)
    child.once('error', fail)
  })
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  child.kill('SIGTERM')
  if (await settlesWithin(exited, KILL_TIMEOUT_MS)) return
  child.kill('SIGKILL')
  await settlesWithin(exited, KILL_TIMEOUT_MS)
}

function settlesWithin(p: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))
  return Promise.race([p.then(() => true), timeout]).finally(() => clearTimeout(timer))
}

/** The stats endpoint of the target serving `url`. */
function statsUrlOf(url: string): string {
  return new URL(`${CONTROL_PREFIX}stats`, url).href
}

/** GETs a simulated target's stats (see fetchStatsJson for the bounded wait). */
export function fetchServerStats(statsUrl: string, timeoutMs?: number): Promise<ServerStats> {
  return fetchStatsJson<ServerStats>(statsUrl, timeoutMs)
}

/** Zeroes a target's counters and idempotency store (POST beside the stats URL). */
export async function resetServerStats(statsUrl: string, timeoutMs = 5_000): Promise<void> {
  const url = new URL('reset', statsUrl).href
  const res = await request(url, { method: 'POST', reset: true, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) })
  await res.body.text()
  if (res.statusCode !== 200) throw new Error(`reset endpoint ${url} answered ${res.statusCode}`)
}
