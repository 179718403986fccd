/**
 * A target of a mix (`--targets FILE`, RunOptions.targets): one request
 * shape of the service the replicas serve, declared once as a valibot
 * schema (its type inferred), and resolved for a run: its path joined onto
 * each replica, its headers after the run's -H, its own hedge delay when it
 * gives one, and whether it may be sent twice.
 */
import { UsageError } from '../core/errors.js'
import { checkHeader } from '../core/header-parse.js'
import { readHedgeDelay, type HedgeDelay, type ResolvedHedgeDelay } from '../core/delay-spec.js'
import { check, exact, list, num, str, v, type Infer } from '../core/schema.js'
import { isIdempotentMethod } from '../hedging/policy.js'

/** The methods a target may name (RFC 9110's, and PATCH); CONNECT opens a tunnel, with nothing to measure. */
export const TARGET_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE'] as const

const METHOD = v.picklist(TARGET_METHODS, `must be one of ${TARGET_METHODS.join(', ')}`)
const PATH = v.pipe(
  str(),
  v.check((p) => p.startsWith('/') && !/[\s\x00-\x1f\x7f]/.test(p), 'must be a path starting with "/" (no spaces or control characters)'),
)
const HEADER = v.pipe(
  v.tuple([str(), str()], 'must be a [name, value] pair'),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return
    try {
      checkHeader(dataset.value[0], dataset.value[1])
    } catch (err) {
      addIssue({ message: (err as Error).message })
    }
  }),
)
const DELAY = v.custom<HedgeDelay>((x) => readHedgeDelay(x) !== null, 'must be a delay in ms or a percentile like "p90"')

/** A target as a program gives it (the targets file is read into these). */
export const TargetSpecSchema = exact({
  method: METHOD,
  /** The path and query, joined onto each replica URL's own path. */
  path: PATH,
  headers: v.optional(list(HEADER)),
  body: v.optional(v.custom<Uint8Array>((x) => x instanceof Uint8Array, 'must be bytes (a Buffer)')),
  /** Its share of the requests against the others' (default 1). */
  weight: v.optional(num(Number.MIN_VALUE)),
  /** This target's hedge delay, in place of its own warm-up's percentile: ms, or "p90". */
  hedgeDelay: v.optional(DELAY),
})
export type TargetSpec = Infer<typeof TargetSpecSchema>

export const TargetListSchema = v.pipe(list(TargetSpecSchema, 'must be an array of targets'), v.minLength(1, 'must hold at least one target'))

/** A target as the run sends it. */
export interface ResolvedTarget {
  /** How reports name it: `GET /a`. */
  name: string
  method: string
  path: string
  /** The run's -H, then the target's own. */
  headers: Array<[string, string]>
  body: Buffer | null
  weight: number
  /** The target's own delay (the file's hedgeDelay), or null: the run's. */
  delay: ResolvedHedgeDelay | null
  /** Sending it twice is allowed: an idempotent method, an Idempotency-Key, or --idempotency-key / --unsafe-hedge. */
  repeatable: boolean
}

/** RunOptions.targets checked ("targets[2].method must be one of ...") and resolved; null when the run has none. */
export function resolveTargets(
  given: unknown,
  runHeaders: ReadonlyArray<[string, string]>,
  optIn: { idempotencyKey: boolean; unsafeHedge: boolean },
): ResolvedTarget[] | null {
  if (given === undefined) return null
  const checked = check(TargetListSchema, given, { top: 'targets' })
  if ('problem' in checked) throw new UsageError(checked.problem.startsWith('[') ? `targets${checked.problem}` : checked.problem)
  return checked.value.map((t) => {
    const headers: Array<[string, string]> = [...runHeaders, ...(t.headers ?? [])]
    const keyed = headers.some(([n]) => n.toLowerCase() === 'idempotency-key')
    return {
      name: `${t.method} ${t.path}`,
      method: t.method,
      path: t.path,
      headers,
      body: t.body ? Buffer.from(t.body) : null,
      weight: t.weight ?? 1,
      delay: t.hedgeDelay === undefined ? null : readHedgeDelay(t.hedgeDelay),
      repeatable: isIdempotentMethod(t.method) || keyed || optIn.idempotencyKey || optIn.unsafeHedge,
    }
  })
}

/** `path` (with its query) on a replica URL: after the replica's own path, as vegeta's and hey's users write it relative to the service. */
export function joinPath(replica: URL, path: string): string {
  const base = replica.pathname.endsWith('/') ? replica.pathname.slice(0, -1) : replica.pathname
  return base + path
}
