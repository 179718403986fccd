/**
 * Scaled-down scenario profiles for the hedging tests, written to a temp dir
 * so the built-in target (spawnTarget, a child process) loads them like any
 * user profile. Stalls are 200 ms instead of 1 s: they prove the same thing
 * in a fifth of the time, as long as --slow sits between base and stall.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before } from 'node:test'
import { spawnTarget, type Target } from '../../src/sim/target.js'

export interface ProfileFiles {
  dir: string
  write(name: string, profile: object): string
  remove(): void
}

export function profileDir(): ProfileFiles {
  const dir = mkdtempSync(join(tmpdir(), 'hedgebench-test-profiles-'))
  return {
    dir,
    write(name, profile) {
      const path = join(dir, `${name}.json`)
      writeFileSync(path, JSON.stringify({ name, description: `test profile ${name}`, ...profile }, null, 2))
      return path
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}

/** 3 replicas, 2-6 ms, each request independently stalls 200 ms with probability 1 %. */
export const INDEPENDENT_STALLS = {
  replicas: 3,
  seed: 20260,
  model: {
    base: { type: 'uniform', min: 2, max: 6 },
    stalls: [{ type: 'independent', probability: 0.01, ms: 200 }],
  },
}

/**
 * One dependency behind every replica pauses for 200-240 ms, a pause starting
 * on average 1 s after the previous one ended: every replica is frozen at
 * the same moments, so a hedge lands in the same pause.
 */
export const SHARED_PAUSES = {
  replicas: 3,
  seed: 20261,
  model: {
    base: { type: 'uniform', min: 2, max: 6 },
    stalls: [{ type: 'pause', everyMs: 1000, durationMs: { min: 200, max: 240 }, scope: 'shared' }],
  },
}

/**
 * For a test file: a temp profile folder for the file's life, and a
 * built-in target (a child process) per test on a profile written to it,
 * closed when the test ends.
 */
export function profileTargets(): (t: { after: (fn: () => Promise<void>) => void }, name: string, profile: object) => Promise<Target> {
  let profiles: ProfileFiles | null = null
  before(() => {
    profiles = profileDir()
  })
  after(() => profiles?.remove())
  return async (t, name, profile) => {
    const tg = await spawnTarget({ profile: profiles!.write(name, profile) })
    t.after(() => tg.close())
    return tg
  }
}
