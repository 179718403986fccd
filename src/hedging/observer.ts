/**
 * What the hedging machinery reports, at the moment each thing happens. The
 * load generator's phase statistics implement this; a production user can
 * feed the same callbacks into metrics. Each callback is synchronous and
 * called exactly once per event, so counters built on it are exact.
 */
import type { SuppressReason } from './saturation-gate.js'

export interface AttemptOutcome {
  /** 0 = original, 1 = first hedge, ... */
  index: number
  origin: string
  /** Time from this attempt's dispatch to its end, ms. */
  latencyMs: number
  status: number | null
  error: Error | null
  bytes: number
  /** This attempt's answer was the one delivered. */
  won: boolean
  /** Its headers reached the wire (false: it failed while connecting). */
  sent: boolean
  /**
   * Where its time went, on the policy's clock (engine/attempt-timing.ts):
   * dispatch, connection ready, request written, response headers; -1 = not
   * reached. Optional: outcomes that do not track them leave them out.
   */
  launchedAt?: number
  connectedAt?: number
  requestSentAt?: number
  firstByteAt?: number
  /** It waited for a connection that was opened for it. */
  openedConnection?: boolean
}

export interface HedgeObserver {
  /** An attempt was handed to the dispatcher (it may still wait for a connection). */
  attemptLaunched(index: number, origin: string): void
  /** An attempt will make no more callbacks: every launched attempt settles exactly once. */
  attemptSettled(index: number, origin: string): void
  /** Headers of an attempt were written to a connection. */
  attemptSent(index: number, origin: string): void
  /**
   * An attempt counted as sent was not processed by its server (HTTP/2: above
   * a GOAWAY's last-stream-id, or REFUSED_STREAM): it is no longer counted.
   * attemptSent follows when it is sent again, attemptUnsent if it is not.
   * `cancelled`: it had already lost the race (counted by attemptCancelled),
   * and that cancel is taken back too (`sentForMs`: as attemptCancelled was told).
   */
  attemptRefused?(index: number, origin: string, cancelled: boolean, sentForMs?: number): void
  /** An attempt was cancelled before it reached the wire: no server saw it. */
  attemptUnsent(index: number, origin: string): void
  /** An attempt on the wire was aborted because the request was decided, `sentForMs` after its headers were written. */
  attemptCancelled(index: number, origin: string, sentForMs?: number): void
  /** An attempt finished (answer or error) while it still counted. Read the outcome during the call: it may be the attempt object itself. */
  attemptDone(outcome: AttemptOutcome): void
  /** An answer arrived after the request was already decided. */
  lateDiscarded(index: number, origin: string): void
  budgetDenied(): void
  /** A hedge was not sent because the replicas show saturation (saturation-gate.ts). */
  saturationSuppressed(reason: SuppressReason): void
  deadlineSuppressed(): void
  nonFatalTriggered(): void
  /** A losing attempt that had reached the wire made its last callback this long after the request was decided, ms. */
  loserFinished(msAfterDecision: number): void
  /** The hedge timer fired this late after its intended time, ms. */
  timerLateness(ms: number): void
}

/** Per-request summary handed to the caller's handler (if it wants it). */
export interface HedgeOutcome {
  /** Attempts started (sent or not). */
  launched: number
  /** Index of the attempt whose answer was delivered, or -1 when all failed. */
  winner: number
  /** Origin of the attempt that answered (or of the last one tried when all failed). */
  origin: string
  /** When the first hedge was launched, ms after the request started; null if none. */
  hedgeFiredMs: number | null
  /** Delay in force for this request, ms. */
  delayMs: number
  /** The budget refused a hedge this request wanted. */
  budgetDenied?: boolean
}

/** Every HedgeObserver callback, for guardObserver. */
const OBSERVER_EVENTS = [
  'attemptLaunched',
  'attemptSettled',
  'attemptSent',
  'attemptRefused',
  'attemptUnsent',
  'attemptCancelled',
  'attemptDone',
  'lateDiscarded',
  'budgetDenied',
  'saturationSuppressed',
  'deadlineSuppressed',
  'nonFatalTriggered',
  'loserFinished',
  'timerLateness',
] as const satisfies ReadonlyArray<keyof HedgeObserver>

/**
 * A caller's observer made safe to call from inside a request: callbacks it
 * leaves out are not called, and one that throws is reported once as a
 * process warning instead of failing, hanging or crashing the request whose
 * event it was (the callbacks run inside undici's socket callbacks and the
 * hedge timer, where a throw has no caller to reach).
 */
export function guardObserver(observer: Partial<HedgeObserver>): HedgeObserver {
  let warned = false
  const guarded = {} as Record<string, (...args: never[]) => void>
  for (const event of OBSERVER_EVENTS) {
    const callback = observer[event] as ((...args: unknown[]) => void) | undefined
    guarded[event] =
      typeof callback !== 'function'
        ? () => {}
        : (...args: unknown[]) => {
            try {
              callback.apply(observer, args)
            } catch (err) {
              if (warned) return
              warned = true
              process.emitWarning(
                `the hedge observer's ${event}() threw (${err instanceof Error ? err.message : String(err)}); requests go on, and further throws are not reported`,
                'HedgeObserverWarning',
              )
            }
          }
  }
  return guarded as unknown as HedgeObserver
}
