/**
 * Scenario profiles for the built-in target: a JSON file describing the
 * replicas' latency model, plus default run options so
 * `hedgebench --profile NAME` with no URL is a complete experiment.
 *
 * Format (see profiles/README.md for the full reference and examples):
 *
 *   {
 *     "name": "pi",                      // required, string
 *     "description": "...",              // required, string
 *     "replicas": 3,                     // required, integer 1..64
 *     "seed": 42,                        // optional, integer 0..4294967295
 *     "model": {                         // required
 *       "base": { "type": "uniform", "min": 5, "max": 15 }
 *             | { "type": "lognormal", "median": 10, "sigma": 0.3 }
 *             | { "type": "fixed", "ms": 10 },
 *       "addMs": 0,                      // optional constant per request
 *       "stalls": [                      // optional, any number
 *         { "type": "independent", "probability": 0.01, "ms": 1000 | { "min": 2000, "max": 11000 } },
 *         { "type": "pause", "everyMs": 2000, "durationMs": { "min": 50, "max": 200 }, "scope": "replica" | "shared" }
 *       ],
 *       "queue": { "workers": 4, "depth": 32 },       // optional: bounded workers, 503 beyond depth
 *       "errors": { "rate": 0.001, "status": 503 },  // optional
 *       "overrides": [ { "index": 2, "addMs": 80 } ]  // optional, 0-based replica index;
 *                                                    // base/queue/errors replace, addMs/stalls add;
 *                                                    // "dieAfter": N stops the replica (refusing
 *                                                    // connections) once it has received N requests
 *     },
 *     "run": {                           // optional defaults for `hedgebench --profile NAME`
 *       "concurrency": 4, "requests": 4000, "warmup": 500, "fanout": 1, "slowMs": 1000,
 *       "timeoutMs": 30000, "durationMs": 10000, "rate": 200, "mode": "both",
 *       "hedgeDelay": "auto" | "p95" | 15, "maxAttempts": 2, "budgetPct": 10
 *     }
 *   }
 *
 * Unknown fields are errors (a typo must not silently change the scenario).
 * Every error is one line naming the file and the field, thrown as UsageError.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { UsageError } from '../core/errors.js'
import { readHedgeDelay, type HedgeDelay } from '../core/delay-spec.js'
import type { Mode } from '../results/run-result.js'
import type { BaseSpec, ErrorSpec, ModelSpec, QueueSpec, Range, ReplicaOverride, StallSpec } from './latency-model.js'

export interface ProfileRunDefaults {
  concurrency?: number
  requests?: number
  durationMs?: number
  rate?: number
  warmup?: number
  fanout?: number
  slowMs?: number
  timeoutMs?: number
  mode?: Mode
  hedgeDelay?: HedgeDelay
  maxAttempts?: number
  budgetPct?: number
}

export interface Profile {
  name: string
  description: string
  replicas: number
  seed?: number
  model: ModelSpec
  run?: ProfileRunDefaults
  /** Absolute path of the file it came from, or null when parsed from an object. */
  file: string | null
}

export interface ProfileSummary {
  name: string
  description: string
  file: string
}

export const MAX_REPLICAS = 64

/** The package's profiles/ folder: dist/src/sim/ -> ../../../profiles. */
export function profilesDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '../../../profiles')
}

/** A path when it looks like one (contains `/` or ends in .json), else a built-in name. */
export function isProfilePath(ref: string): boolean {
  return ref.includes('/') || ref.includes('\\') || ref.endsWith('.json')
}

/** Loads and validates a profile by built-in name or by path. */
export function loadProfile(ref: string): Profile {
  if (isProfilePath(ref)) return loadProfileFile(resolve(ref), ref)
  const names = profileNames()
  if (!names.includes(ref)) {
    throw new UsageError(`unknown profile "${ref}" (available: ${names.join(', ') || 'none'}; or give a path to a .json file)`)
  }
  const file = join(profilesDir(), `${ref}.json`)
  return loadProfileFile(file, displayName(file))
}

/** Every built-in profile, validated (a broken shipped profile is a bug worth failing on). */
export function listProfiles(): ProfileSummary[] {
  return profileNames().map((name) => {
    const p = loadProfile(name)
    return { name: p.name, description: p.description, file: p.file! }
  })
}

/** Names of the built-in profiles (file names in profiles/), without loading them. */
export function profileNames(): string[] {
  const dir = profilesDir()
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => basename(f, '.json'))
    .sort()
}

function displayName(file: string): string {
  const rel = relative(resolve(profilesDir(), '..'), file)
  return rel.startsWith('..') ? file : rel
}

function loadProfileFile(file: string, shown: string): Profile {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error'
    throw new UsageError(`${shown}: cannot read profile (${code === 'ENOENT' ? 'no such file' : code})`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new UsageError(`${shown}: not valid JSON (${(err as Error).message.split('\n')[0]})`)
  }
  return { ...parseProfile(json, shown), file }
}

/** Validates a profile object; `source` names it in errors. */
export function parseProfile(json: unknown, source = 'profile'): Profile {
  const v = new Validator(source)
  const o = v.object(json, '(top level)')
  v.known(o, '', ['name', 'description', 'replicas', 'seed', 'model', 'run'])
  const replicas = v.int(o.replicas, 'replicas', 1, MAX_REPLICAS)
  const profile: Profile = {
    name: v.string(o.name, 'name'),
    description: v.string(o.description, 'description'),
    replicas,
    model: parseModel(v, o.model, replicas),
    file: null,
  }
  if (o.seed !== undefined) profile.seed = v.int(o.seed, 'seed', 0, 0xffffffff)
  if (o.run !== undefined) profile.run = parseRun(v, o.run)
  return profile
}

function parseModel(v: Validator, raw: unknown, replicas: number): ModelSpec {
  const o = v.object(raw, 'model')
  v.known(o, 'model', ['base', 'addMs', 'stalls', 'queue', 'errors', 'overrides'])
  const model: ModelSpec = { base: parseBase(v, o.base, 'model.base') }
  if (o.addMs !== undefined) model.addMs = v.num(o.addMs, 'model.addMs', 0)
  if (o.stalls !== undefined) model.stalls = parseStalls(v, o.stalls, 'model.stalls', true)
  if (o.queue !== undefined) model.queue = parseQueue(v, o.queue, 'model.queue')
  if (o.errors !== undefined) model.errors = parseErrors(v, o.errors, 'model.errors')
  if (o.overrides !== undefined) {
    const list = v.array(o.overrides, 'model.overrides')
    model.overrides = list.map((item, i) => parseOverride(v, item, `model.overrides[${i}]`, replicas))
    const seen = new Set<number>()
    model.overrides.forEach((ov, i) => {
      if (seen.has(ov.index)) v.fail(`model.overrides[${i}].index`, `repeats replica ${ov.index}`)
      seen.add(ov.index)
    })
  }
  return model
}

function parseBase(v: Validator, raw: unknown, path: string): BaseSpec {
  const o = v.object(raw, path)
  const type = v.oneOf(o.type, `${path}.type`, ['uniform', 'lognormal', 'fixed'] as const)
  switch (type) {
    case 'uniform': {
      v.known(o, path, ['type', 'min', 'max'])
      const r = v.range(o, path)
      return { type, min: r.min, max: r.max }
    }
    case 'lognormal':
      v.known(o, path, ['type', 'median', 'sigma'])
      return { type, median: v.num(o.median, `${path}.median`, 0), sigma: v.num(o.sigma, `${path}.sigma`, 0, 5) }
    case 'fixed':
      v.known(o, path, ['type', 'ms'])
      return { type, ms: v.num(o.ms, `${path}.ms`, 0) }
  }
}

function parseStalls(v: Validator, raw: unknown, path: string, allowShared: boolean): StallSpec[] {
  return v.array(raw, path).map((item, i) => parseStall(v, item, `${path}[${i}]`, allowShared))
}

function parseStall(v: Validator, raw: unknown, path: string, allowShared: boolean): StallSpec {
  const o = v.object(raw, path)
  const type = v.oneOf(o.type, `${path}.type`, ['independent', 'pause'] as const)
  if (type === 'independent') {
    v.known(o, path, ['type', 'probability', 'ms'])
    const probability = v.num(o.probability, `${path}.probability`, 0, 1)
    const ms = typeof o.ms === 'object' && o.ms !== null ? v.rangeObject(o.ms, `${path}.ms`) : v.num(o.ms, `${path}.ms`, 0)
    return { type, probability, ms }
  }
  v.known(o, path, ['type', 'everyMs', 'durationMs', 'scope'])
  const everyMs = v.num(o.everyMs, `${path}.everyMs`, 1)
  const durationMs = v.rangeObject(o.durationMs, `${path}.durationMs`)
  const scope = v.oneOf(o.scope, `${path}.scope`, ['replica', 'shared'] as const)
  if (scope === 'shared' && !allowShared) v.fail(`${path}.scope`, 'cannot be "shared" in an override (a shared dependency is the same for every replica)')
  return { type, everyMs, durationMs, scope }
}

function parseQueue(v: Validator, raw: unknown, path: string): QueueSpec {
  const o = v.object(raw, path)
  v.known(o, path, ['workers', 'depth'])
  return { workers: v.int(o.workers, `${path}.workers`, 1, 100_000), depth: v.int(o.depth, `${path}.depth`, 0, 1_000_000) }
}

function parseErrors(v: Validator, raw: unknown, path: string): ErrorSpec {
  const o = v.object(raw, path)
  v.known(o, path, ['rate', 'status'])
  return { rate: v.num(o.rate, `${path}.rate`, 0, 1), status: v.int(o.status, `${path}.status`, 400, 599) }
}

function parseOverride(v: Validator, raw: unknown, path: string, replicas: number): ReplicaOverride {
  const o = v.object(raw, path)
  v.known(o, path, ['index', 'addMs', 'base', 'stalls', 'queue', 'errors', 'dieAfter'])
  const ov: ReplicaOverride = { index: v.int(o.index, `${path}.index`, 0, replicas - 1) }
  if (o.addMs !== undefined) ov.addMs = v.num(o.addMs, `${path}.addMs`, 0)
  if (o.base !== undefined) ov.base = parseBase(v, o.base, `${path}.base`)
  if (o.stalls !== undefined) ov.stalls = parseStalls(v, o.stalls, `${path}.stalls`, false)
  if (o.queue !== undefined) ov.queue = parseQueue(v, o.queue, `${path}.queue`)
  if (o.errors !== undefined) ov.errors = parseErrors(v, o.errors, `${path}.errors`)
  if (o.dieAfter !== undefined) ov.dieAfter = v.int(o.dieAfter, `${path}.dieAfter`, 1, 10_000_000)
  return ov
}

function parseRun(v: Validator, raw: unknown): ProfileRunDefaults {
  const o = v.object(raw, 'run')
  const ints = ['concurrency', 'requests', 'fanout'] as const
  const nums = ['durationMs', 'rate', 'slowMs', 'timeoutMs'] as const
  v.known(o, 'run', [...ints, ...nums, 'warmup', 'mode', 'hedgeDelay', 'maxAttempts', 'budgetPct'])
  const run: ProfileRunDefaults = {}
  for (const k of ints) if (o[k] !== undefined) run[k] = v.int(o[k], `run.${k}`, 1, 10_000_000)
  for (const k of nums) if (o[k] !== undefined) run[k] = v.num(o[k], `run.${k}`, Number.MIN_VALUE)
  if (o.warmup !== undefined) run.warmup = v.int(o.warmup, 'run.warmup', 0, 10_000_000)
  if (o.mode !== undefined) run.mode = v.oneOf(o.mode, 'run.mode', ['plain', 'hedged', 'both'] as const)
  if (o.maxAttempts !== undefined) run.maxAttempts = v.int(o.maxAttempts, 'run.maxAttempts', 2, 5)
  if (o.budgetPct !== undefined) run.budgetPct = v.num(o.budgetPct, 'run.budgetPct', 0, 100)
  if (o.hedgeDelay !== undefined) run.hedgeDelay = parseHedgeDelay(v, o.hedgeDelay)
  return run
}

function parseHedgeDelay(v: Validator, raw: unknown): HedgeDelay {
  if (readHedgeDelay(raw) !== null) return raw as HedgeDelay
  if (typeof raw === 'number') return v.num(raw, 'run.hedgeDelay', 0) // below 0: fails naming the bound
  return v.fail('run.hedgeDelay', `must be "auto", a percentile like "p95", or a number of milliseconds`)
}

/** Small checker whose every failure is one line: "<file>: <field> <problem>". */
class Validator {
  constructor(private readonly source: string) {}

  fail(path: string, problem: string): never {
    throw new UsageError(`${this.source}: ${path} ${problem}`)
  }

  object(raw: unknown, path: string): Record<string, unknown> {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) this.fail(path, 'must be an object')
    return raw as Record<string, unknown>
  }

  array(raw: unknown, path: string): unknown[] {
    if (!Array.isArray(raw)) this.fail(path, 'must be an array')
    return raw
  }

  known(o: Record<string, unknown>, path: string, keys: readonly string[]): void {
    for (const k of Object.keys(o)) {
      if (!keys.includes(k)) this.fail(path ? `${path}.${k}` : k, `is not a known field (expected one of: ${keys.join(', ')})`)
    }
  }

  string(raw: unknown, path: string): string {
    if (typeof raw !== 'string' || raw.trim() === '') this.fail(path, 'must be a non-empty string')
    return raw
  }

  num(raw: unknown, path: string, min: number, max = Infinity): number {
    if (typeof raw !== 'number' || !Number.isFinite(raw) || raw < min || raw > max) this.fail(path, `must be ${describeBounds('a number', min, max)}`)
    return raw
  }

  int(raw: unknown, path: string, min: number, max: number): number {
    if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > max) this.fail(path, `must be ${describeBounds('an integer', min, max)}`)
    return raw
  }

  range(o: Record<string, unknown>, path: string): Range {
    const min = this.num(o.min, `${path}.min`, 0)
    const max = this.num(o.max, `${path}.max`, 0)
    if (max < min) this.fail(`${path}.max`, `must be >= ${path}.min (${min})`)
    return { min, max }
  }

  /** A bare { min, max } object. */
  rangeObject(raw: unknown, path: string): Range {
    const o = this.object(raw, path)
    this.known(o, path, ['min', 'max'])
    return this.range(o, path)
  }

  oneOf<T extends string>(raw: unknown, path: string, choices: readonly T[]): T {
    if (typeof raw !== 'string' || !(choices as readonly string[]).includes(raw)) {
      this.fail(path, `must be one of ${choices.map((c) => `"${c}"`).join(', ')}`)
    }
    return raw as T
  }
}

function describeBounds(what: string, min: number, max: number): string {
  if (max === Infinity) return min === Number.MIN_VALUE ? `${what} > 0` : `${what} >= ${min}`
  return `${what} between ${min} and ${max}`
}
