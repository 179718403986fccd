/**
 * A target of a mix (`--targets FILE`, RunOptions.targets): one request
 * shape of the service the replicas serve, declared once as a valibot
 * schema (its type inferred), and resolved for a run: its path joined onto
 * each replica, its headers after the run's -H, its own hedge delay when it
 * gives one, and whether it may be sent twice. An HTTP target gives a
 * method and a path; a gRPC one (grpc:// replicas) a call and its message,
 * which the run's schema resolves (run/grpc-target.ts grpcTargetCall).
 */
import { UsageError } from '../core/errors.js'
import { checkHeader } from '../core/header-parse.js'
import { readHedgeDelay, type HedgeDelay, type ResolvedHedgeDelay } from '../core/delay-spec.js'
import { check, exact, list, num, str, v, type Infer } from '../core/schema.js'
import { isIdempotentMethod } from '../hedging/policy.js'
import type { GrpcTemplate } from '../protocol/grpc-template.js'

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

/** A gRPC target's method: `package.Service/Method` (or ghz's `package.Service.Method`). */
const CALL = v.pipe(
  str(),
  v.check((c) => /^\.?[\w.]+[/.]\w+$/.test(c.trim()), 'must be package.Service/Method'),
)

/** A target as a program gives it (the targets file is read into these): `method` and `path` (HTTP), or `call` (gRPC). */
export const TargetSpecSchema = v.pipe(
  exact({
    method: v.optional(METHOD),
    /** The path and query, joined onto each replica URL's own path. */
    path: v.optional(PATH),
    /** gRPC: the method called, in place of `method` and `path`. */
    call: v.optional(CALL),
    /** gRPC: the request message, as its JSON mapping (default: the empty message). */
    message: v.optional(v.unknown()),
    /**
     * gRPC: the request message as JSON text, in place of `message`: what the
     * targets file keeps of a message holding template actions, which may stand
     * where JSON has no place for them (`"n": {{.RequestNumber}}`).
     */
    messageText: v.optional(str()),
    /** Headers; for a gRPC target, its metadata. */
    headers: v.optional(list(HEADER)),
    body: v.optional(v.custom<Uint8Array>((x) => x instanceof Uint8Array, 'must be bytes (a Buffer)')),
    /** Its share of the requests against the others' (default 1). */
    weight: v.optional(num(Number.MIN_VALUE)),
    /** This target's hedge delay, in place of its own warm-up's percentile: ms, or "p90". */
    hedgeDelay: v.optional(DELAY),
    /** Where it was read ("mix.txt:7"): what a later refusal of it names (an unknown method once the schema is loaded). */
    at: v.optional(str()),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return
    const t = dataset.value
    if (t.call !== undefined) {
      const http = (['method', 'path', 'body'] as const).filter((k) => t[k] !== undefined)
      if (http.length > 0) addIssue({ message: `a gRPC target (call) takes no ${http.join(', ')}: its message is "message"` })
      else if (t.message !== undefined && t.messageText !== undefined) addIssue({ message: 'give "message" or "messageText", not both' })
    } else if (t.method === undefined || t.path === undefined) addIssue({ message: `a target needs "method" and "path" (HTTP), or "call" (gRPC)` })
    else if (t.message !== undefined || t.messageText !== undefined)
      addIssue({ message: `"${t.message !== undefined ? 'message' : 'messageText'}" is a gRPC target's (with "call"); an HTTP target has a body` })
  }),
)
export type TargetSpec = Infer<typeof TargetSpecSchema>

export const TargetListSchema = v.pipe(list(TargetSpecSchema, 'must be an array of targets'), v.minLength(1, 'must hold at least one target'))

/** A target as the run sends it. */
export interface ResolvedTarget {
  /** How reports name it: `GET /a`; a gRPC target by its call, `package.Service/Method`. */
  name: string
  /** The HTTP method; CALL for a gRPC target. */
  method: string
  /** The path and query; a gRPC target's is its method's, `/package.Service/Method`. */
  path: string
  /** The run's -H, then the target's own. */
  headers: Array<[string, string]>
  /** The body (sent as given: a `{{` in it is text); a gRPC target's message, framed (with a template: call 0's). */
  body: Buffer | null
  /** A gRPC message holding template actions: each logical call renders its own (grpc-target.ts targetMessages); null: `body` on every call. */
  template: GrpcTemplate | null
  weight: number
  /** The target's own delay (the file's hedgeDelay), or null: the run's. */
  delay: ResolvedHedgeDelay | null
  /** Sending it twice is allowed: an idempotent method (a gRPC method marked so in its proto), an Idempotency-Key, or --idempotency-key / --unsafe-hedge. */
  repeatable: boolean
  /** The method itself is idempotent (by HTTP's definition, or marked so in a gRPC proto), opt-ins aside: what a pre-run check may call. */
  idempotent: boolean
}

/** The method a gRPC target's `call` resolves to in the run's schema, and its message encoded (run/grpc-target.ts); `at` names the target in a refusal. */
export type GrpcTargetCall = (
  target: { call: string; message: unknown; messageText?: string | undefined; headers?: ReadonlyArray<readonly [string, string]> | undefined },
  at: string,
) => { call: string; path: string; body: Buffer; safe: boolean; template: GrpcTemplate | null }

/** A gRPC target's method in reports and the targets file. */
export const GRPC_TARGET_METHOD = 'CALL'

/**
 * RunOptions.targets checked ("targets[2].method must be one of ...") and
 * resolved; null when the run has none. `grpc`: how a call resolves when the
 * replicas are grpc:// (null: they are http, and every target must be HTTP).
 */
export function resolveTargets(
  given: unknown,
  runHeaders: ReadonlyArray<[string, string]>,
  optIn: { idempotencyKey: boolean; unsafeHedge: boolean },
  grpc: GrpcTargetCall | null = null,
): ResolvedTarget[] | null {
  if (given === undefined) return null
  const checked = check(TargetListSchema, given, { top: 'targets' })
  if ('problem' in checked) throw new UsageError(checked.problem.startsWith('[') ? `targets${checked.problem}` : checked.problem)
  const resolved = checked.value.map((t, i) => {
    const at = t.at ?? `targets[${i}]`
    const headers: Array<[string, string]> = [...runHeaders, ...(t.headers ?? [])]
    const keyed = headers.some(([n]) => n.toLowerCase() === 'idempotency-key')
    const optedIn = keyed || optIn.idempotencyKey || optIn.unsafeHedge
    const own = { headers, weight: t.weight ?? 1, delay: t.hedgeDelay === undefined ? null : readHedgeDelay(t.hedgeDelay) }
    if (t.call !== undefined) {
      if (!grpc) throw new UsageError(`${at}: CALL ${t.call} is a gRPC call, and the replicas are http:// (give grpc://host:port replicas, or METHOD path)`)
      const c = grpc({ call: t.call, message: t.message, messageText: t.messageText, headers: t.headers }, at)
      const { call, safe, ...sent } = c
      return { name: call, method: GRPC_TARGET_METHOD, ...sent, repeatable: safe || optedIn, idempotent: safe, ...own }
    }
    const { method, path } = t as { method: string; path: string }
    if (grpc) throw new UsageError(`${at}: ${method} ${path} is an HTTP request, and the replicas are grpc:// (give CALL package.Service/Method)`)
    const idempotent = isIdempotentMethod(method)
    const body = t.body ? Buffer.from(t.body) : null
    return { name: `${method} ${path}`, method, path, body, template: null, repeatable: idempotent || optedIn, idempotent, ...own }
  })
  return distinctNames(resolved)
}

/**
 * Targets that would be named alike (the same method and path, or call,
 * with other headers or bodies) told apart in every report: the second
 * `GET /a #2`, the third `#3`, in the file's order; the first keeps its name.
 */
function distinctNames(targets: ResolvedTarget[]): ResolvedTarget[] {
  const seen = new Map<string, number>()
  return targets.map((t) => {
    const n = (seen.get(t.name) ?? 0) + 1
    seen.set(t.name, n)
    return n === 1 ? t : { ...t, name: `${t.name} #${n}` }
  })
}

/** `path` (with its query) on a replica URL: after the replica's own path, as vegeta's and hey's users write it relative to the service. */
export function joinPath(replica: URL, path: string): string {
  const base = replica.pathname.endsWith('/') ? replica.pathname.slice(0, -1) : replica.pathname
  return base + path
}
