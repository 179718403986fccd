/**
 * The checks a hedging policy passes before anything is sent, for the
 * library's callers (`createHedgeInterceptor`, `hedged`, `normalizePolicy`):
 * what the CLI and the profiles already refuse, refused here with the field
 * named, at creation rather than as a TypeError inside a timer later.
 */
import { UsageError } from '../core/errors.js'
import { isToken } from '../core/header-parse.js'

const fail = (field: string, got: unknown, want: string): never => {
  throw new UsageError(`hedging policy: ${field === '' ? '' : `${field} `}${describe(got)} (${want})`)
}

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v)
  if (Array.isArray(v)) return 'an array'
  return v === null ? 'null' : typeof v === 'object' ? 'an object' : String(v)
}

const isNonNegative = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0

/** Takes the policy as unknown: it is the caller's value, not yet known to be a HedgePolicy (and policy.ts imports this file). */
export function checkPolicy(policy: unknown): void {
  if (policy === null || typeof policy !== 'object') fail('', policy, 'pass an object: { delay, replicas, ... }')
  const p = policy as unknown as Record<string, unknown>
  const delay = p.delay
  const isSource =
    typeof delay === 'object' &&
    delay !== null &&
    typeof (delay as { current?: unknown }).current === 'function' &&
    typeof (delay as { observe?: unknown }).observe === 'function'
  if (!isNonNegative(delay) && !isSource) fail('delay', delay, 'milliseconds as a number >= 0, or a DelaySource with current() and observe()')
  if (p.maxAttempts !== undefined && !(Number.isInteger(p.maxAttempts) && (p.maxAttempts as number) >= 1))
    fail('maxAttempts', p.maxAttempts, 'a whole number >= 1 counting the original; 1 never hedges, more than 5 counts as 5')
  if (p.budgetPct !== undefined && p.budgetPct !== null && !(isNonNegative(p.budgetPct) && p.budgetPct <= 100))
    fail('budgetPct', p.budgetPct, 'a percentage of originals from 0 to 100, or null for no budget')
  if (p.budgetBurst !== undefined && !isNonNegative(p.budgetBurst)) fail('budgetBurst', p.budgetBurst, 'tokens, a number >= 0')
  if (p.nonFatalStatus !== undefined && !(Array.isArray(p.nonFatalStatus) && p.nonFatalStatus.every((s) => Number.isInteger(s) && s >= 100 && s <= 599)))
    fail('nonFatalStatus', p.nonFatalStatus, 'an array of HTTP statuses')
  if (p.deadlineMs !== undefined && p.deadlineMs !== null && !(isNonNegative(p.deadlineMs) && p.deadlineMs > 0))
    fail('deadlineMs', p.deadlineMs, 'milliseconds > 0, or null')
  if (p.minHedgeWindowMs !== undefined && !isNonNegative(p.minHedgeWindowMs)) fail('minHedgeWindowMs', p.minHedgeWindowMs, 'milliseconds >= 0')
  if (p.cancel !== undefined && p.cancel !== 'abort' && p.cancel !== 'ignore') fail('cancel', p.cancel, '"abort" or "ignore"')
  if (p.header !== undefined && p.header !== null && !(typeof p.header === 'string' && isToken(p.header)))
    fail('header', p.header, 'a header name, or null for none')
  for (const fn of ['random', 'now'] as const) if (p[fn] !== undefined && typeof p[fn] !== 'function') fail(fn, p[fn], 'a function')
  if (p.observer !== undefined && p.observer !== null && typeof p.observer !== 'object')
    fail('observer', p.observer, 'an object with the HedgeObserver callbacks it wants')
  if (p.replicas !== undefined && !(Array.isArray(p.replicas) && p.replicas.every((r) => typeof r === 'string')))
    fail('replicas', p.replicas, 'an array of origins such as "http://10.0.0.5:8080"')
}

/**
 * A replica as the origin requests carry (`http://host:port`, undici's
 * `opts.origin`): a trailing slash is dropped; a path is refused, because
 * every attempt keeps its own request's path and a replica's would be
 * silently ignored.
 */
export function replicaOrigin(replica: string): string {
  let url: URL
  try {
    url = new URL(replica)
  } catch {
    return fail('replica', replica, 'an origin with its scheme, such as "http://127.0.0.1:8080"')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail('replica', replica, 'an http:// or https:// origin')
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '')
    fail('replica', replica, `an origin without a path: each attempt keeps its request's own path; use "${url.origin}"`)
  if (url.username !== '' || url.password !== '') fail('replica', replica, 'an origin without credentials: send them as a header')
  return url.origin
}
