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
import { check, type Infer } from '../core/schema.js'
import { MAX_REPLICAS, ProfileSchema } from './profile-schema.js'

export { MAX_REPLICAS }
export type { ProfileRunDefaults } from './profile-schema.js'

/** A profile as its schema declares it, and where it came from. */
export type Profile = Infer<typeof ProfileSchema> & {
  /** Absolute path of the file it came from, or null when parsed from an object. */
  file: string | null
}

export interface ProfileSummary {
  name: string
  description: string
  file: string
}

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

/** Validates a profile object; `source` names it in errors: "<source>: <field> <problem>", one line. */
export function parseProfile(json: unknown, source = 'profile'): Profile {
  const checked = check(ProfileSchema, json, { top: '(top level)' })
  if ('problem' in checked) throw new UsageError(`${source}: ${checked.problem}`)
  return { ...checked.value, file: null }
}
