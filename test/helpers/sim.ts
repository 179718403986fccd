/**
 * Shared bits for the simulated-target tests: temp profiles, a timed GET and
 * a bounded closed-loop driver. Traffic only ever goes to 127.0.0.1.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { Agent, request } from 'undici'
import type { Target } from '../../src/sim/target.js'

export interface TempProfile {
  path: string
  cleanup(): void
}

/** Writes a profile object to a fresh temp dir. */
export function writeTempProfile(profile: unknown, fileName = 'profile.json'): TempProfile {
  const dir = mkdtempSync(join(tmpdir(), 'hedgebench-sim-test-'))
  const path = join(dir, fileName)
  writeFileSync(path, typeof profile === 'string' ? profile : JSON.stringify(profile, null, 2))
  return { path, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

export interface Timed {
  ms: number
  status: number
  body: string
  /** Simulated service time the server reported (Server-Timing: sim;dur=), pauses included. */
  serverMs: number
  /** Time the request waited for a worker (Server-Timing: queue;dur=). */
  queueMs: number
  serverStalled: boolean
}

export async function timedRequest(
  url: string,
  dispatcher: Agent,
  init: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {},
): Promise<Timed> {
  const start = performance.now()
  const res = await request(url, {
    dispatcher,
    method: (init.method ?? 'GET') as 'GET',
    headers: init.headers,
    body: init.body,
    signal: init.signal,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  })
  const body = await res.body.text()
  const ms = performance.now() - start
  const timing = String(res.headers['server-timing'] ?? '')
  const sim = /sim;dur=([\d.]+)/.exec(timing)
  const queue = /queue;dur=([\d.]+)/.exec(timing)
  return {
    ms,
    status: res.statusCode,
    body,
    serverMs: sim ? Number(sim[1]) : NaN,
    queueMs: queue ? Number(queue[1]) : NaN,
    serverStalled: timing.includes('stall'),
  }
}

/**
 * Sends `count` GETs with `concurrency` in flight, request i to urls[i % n]
 * (so each replica's request stream is fixed and the seeded draws replay).
 * Bounded by `maxMs`: throws rather than hang.
 */
export async function closedLoop(urls: string[], count: number, concurrency: number, dispatcher: Agent, maxMs = 20_000): Promise<Timed[]> {
  const results: Timed[] = new Array(count)
  const deadline = performance.now() + maxMs
  let next = 0
  const worker = async () => {
    while (next < count) {
      if (performance.now() > deadline) throw new Error(`closed loop exceeded ${maxMs} ms`)
      const i = next++
      results[i] = await timedRequest(urls[i % urls.length]!, dispatcher)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return results
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

/** Polls `check` until it returns true or `maxMs` passes (bounded count and time). */
export async function eventually(check: () => Promise<boolean>, maxMs = 3_000, everyMs = 25): Promise<boolean> {
  const deadline = performance.now() + maxMs
  for (let i = 0; i < 1_000 && performance.now() < deadline; i++) {
    if (await check()) return true
    await new Promise((r) => setTimeout(r, everyMs))
  }
  return check()
}

export function newAgent(connections = 64): Agent {
  return new Agent({ connections, keepAliveTimeout: 10_000 })
}

/** One agent, and every target and temp profile a test file makes, all closed after the file's tests. */
export function simSession(connections = 128): { agent: Agent; targets: Target[]; temps: TempProfile[] } {
  const session = { agent: newAgent(connections), targets: [] as Target[], temps: [] as TempProfile[] }
  after(async () => {
    await Promise.all(session.targets.map((t) => t.close()))
    await session.agent.close()
    for (const t of session.temps) t.cleanup()
  })
  return session
}

/** A running simulated target and the temp profile it serves, closed together. */
export interface FastTarget {
  target: Target
  close(): Promise<void>
}

/**
 * Two simulated replicas answering in 1-3 ms, `stallProbability` of the
 * requests 25 ms slower (something to hedge): short runs whose every phase
 * stays well inside the report's fine timeline, for tests of a result's
 * shape and its text rather than of its numbers.
 */
export async function startFastTarget(stallProbability = 0): Promise<FastTarget> {
  const { startTarget } = await import('../../src/sim/target.js')
  const profile = writeTempProfile({
    name: 'fast',
    description: 'fast answers, a few slow ones to hedge',
    replicas: 2,
    seed: 5,
    model: { base: { type: 'uniform', min: 1, max: 3 }, stalls: stallProbability > 0 ? [{ type: 'independent', probability: stallProbability, ms: 25 }] : [] },
  })
  const target = await startTarget({ profile: profile.path })
  return {
    target,
    close: async () => {
      await target.close()
      profile.cleanup()
    },
  }
}
