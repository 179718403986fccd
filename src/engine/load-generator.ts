/**
 * The load generator for one measured window: `concurrency` slots, each
 * running one logical request at a time (closed loop), or each taking the
 * next intended start time of a fixed schedule (open loop, -q). A window has
 * one lane (a phase) or two (the interleaved plain/hedged schedule).
 *
 * Slots are reused objects that are their own undici handlers, so the hot
 * path allocates nothing of its own per request beyond what undici and the
 * hedging policy need.
 */
import type { Dispatcher } from 'undici'
import { isOkStatus } from '../core/status.js'
import type { HedgeOutcome } from '../hedging/observer.js'
import type { HedgeCaller } from './hedged-request.js'
import type { PhaseStats, RequestSample } from '../stats/phase-stats.js'
import { errorKind } from '../stats/figures.js'
import type { RoundRobin } from '../hedging/replica-picker.js'
import type { RequestSink } from '../results/request-record.js'
import { stillEarly } from './early-timer.js'
import { round3 } from '../core/round.js'
import { eventNow } from '../core/event-clock.js'
import type { SendTimes } from './load-schedule.js'
import { MAX_POINTS } from '../stats/timeline.js'
// Node 20's global `performance` is a lazy getter run at every use; the module's own object is read directly (several clock reads per request).
import { performance } from 'node:perf_hooks'

export interface Lane {
  stats: PhaseStats
  dispatch: Dispatcher.Dispatch
  picker: RoundRobin
  /** This lane's request per replica origin (a target of a mix); absent: the window's. */
  optsByOrigin?: ReadonlyMap<string, Dispatcher.DispatchOptions>
  /** The target of a mix this lane sends, as the per-request log names it. */
  target?: string
  /** Per-call data of this lane's target (a mix's gRPC message with template actions), as the window's nextBody; absent: the window's. */
  nextBody?: () => Uint8Array
}

export interface WindowPlan {
  lanes: Lane[]
  /** Picks a lane index per logical request; absent = always lane 0. */
  chooseLane?: () => number
  /** Logical requests in the window, or null when timed. */
  requests: number | null
  durationMs: number | null
  /** With a request count: keep sending past it until the window has lasted this long (0 = no minimum; the default warm-up). */
  minDurationMs?: number
  concurrency: number
  /** Global requests/s for open loop, or null for closed loop. */
  rate: number | null
  fanout: number
  /** Dispatch options per replica origin, built once. */
  optsByOrigin: ReadonlyMap<string, Dispatcher.DispatchOptions>
  /** Per-call data (a gRPC -d template): each logical call's own body, made once and sent by every attempt of it. Absent: the options' body. */
  nextBody?: () => Uint8Array
  runStartedAt: number
  sink?: RequestSink | undefined
  /**
   * Closed loop: the slots' first requests spread evenly over this long (one
   * typical latency of the target) instead of all at once; 0 or absent = at
   * once. Slots started together stay in step: the target answers them in
   * one burst and the generator reads the burst back to back, so the last
   * answers of each burst wait for the others (1-4 ms at -c 40), for many
   * rounds, in the window's tail. A population of callers is not in step.
   */
  spreadMs?: number
  /** With spreadMs: this thread's slots start this fraction of a step late (worker i of n: i/n), so that threads interleave. */
  spreadPhase?: number
  /**
   * Open loop: the instant (performance.now()) the schedule counts from;
   * absent: the window's start. The threads of --workers share one, so that
   * a thread whose window started late does not send late all along.
   */
  scheduleOrigin?: number
  /** Open loop: the schedule starts this much after its origin (a thread's and a shard's place among the others), ms. */
  scheduleOffsetMs?: number
  /** Open loop with --load-schedule: each send's time by the schedule (load-schedule.ts), instead of every 1/rate s. */
  sendTimes?: SendTimes
  /** Closed loop with --concurrency-schedule: when each slot takes part, ms from the window's start (load-schedule.ts slotSpans). */
  slotSpans?: ReadonlyArray<{ fromMs: number; untilMs: number }>
  /** Count the sends of each second (sentPerSecond): a scheduled window's achieved side. */
  countSends?: boolean
  /**
   * --skip-first: each lane's first `count` requests go to its twin in
   * `lanes` (same index), whose statistics are nobody's: they are sent as
   * the lane's are, and counted nowhere the phase is. `group`: the
   * consecutive lanes that share one count (a mix's targets of a phase: its
   * first requests are skipped whatever target they drew); default 1.
   */
  skip?: { count: number; lanes: Lane[]; group?: number }
}

/** An open-loop send later than this after its intended time counts as late. */
const LATE_SEND_MS = 1

export class LoadWindow {
  readonly startedAt = performance.now()
  completed = 0
  #issued = 0
  #idle = 0
  #stopping = false
  #waitingForDrain: Slot[] = []
  #draining = false
  readonly #slots: Slot[]
  readonly #interval: number
  /** Open loop: the schedule's first send (its origin, plus this thread's and shard's place among the others). */
  readonly #scheduleStart: number
  /** With sendTimes: the sends that left in each second of the window (the asked series' other half). */
  readonly sentPerSecond: number[] | null
  /** --skip-first: requests each group of lanes still sends through its twins. */
  readonly #skipLeft: number[]
  readonly #skipGroup: number
  #resolve: (() => void) | null = null

  constructor(readonly plan: WindowPlan) {
    const slots = plan.requests === null ? plan.concurrency : Math.min(plan.concurrency, plan.requests)
    this.#slots = Array.from({ length: Math.max(1, slots) }, (_, i) => new Slot(this, plan.fanout, i))
    this.#interval = plan.rate ? 1000 / plan.rate : 0
    this.#scheduleStart = (plan.scheduleOrigin ?? this.startedAt) + (plan.scheduleOffsetMs ?? 0)
    this.sentPerSecond = plan.countSends ? [] : null
    this.#skipGroup = plan.skip?.group ?? 1
    this.#skipLeft = Array.from({ length: Math.ceil(plan.lanes.length / this.#skipGroup) }, () => plan.skip?.count ?? 0)
  }

  /** Requests the window has taken (sent, or about to be). */
  get issued(): number {
    return this.#issued
  }

  /** Resolves when every slot is idle (the last request of the window finished). */
  run(): Promise<void> {
    return new Promise((resolve) => {
      this.#resolve = resolve
      const slots = this.#slots
      const step = this.plan.rate === null && this.plan.spreadMs ? this.plan.spreadMs / slots.length : 0
      const phase = this.plan.spreadPhase ?? 0
      for (let i = 0; i < slots.length; i++) {
        const at = (i + phase) * step
        if (at > 0) slots[i]!.beginAfter(at)
        else slots[i]!.begin()
      }
    })
  }

  /** Stop issuing requests; in-flight ones finish (or are aborted by the caller). */
  stop(): void {
    this.#stopping = true
    const waiting = this.#waitingForDrain
    this.#waitingForDrain = []
    for (const slot of waiting) this.slotIdle(slot)
    for (const slot of this.#slots) if (slot.timer) slot.cancelWait()
  }

  /** Next sequence number, or -1 when the window is over. */
  take(now: number): number {
    if (this.#stopping) return -1
    const plan = this.plan
    if (plan.requests !== null && this.#issued >= plan.requests && now - this.startedAt >= (plan.minDurationMs ?? 0)) return this.#over()
    if (plan.durationMs !== null) {
      const at = this.#interval > 0 ? this.intendedStart(this.#issued) : now
      if (at - this.startedAt >= plan.durationMs) return this.#over()
    }
    return this.#issued++
  }

  /** The window has sent all it will: slots still waiting for their turn (--concurrency-schedule) never get one. */
  #over(): -1 {
    if (this.plan.slotSpans) for (const slot of this.#slots) if (slot.parked) slot.cancelWait()
    return -1
  }

  /**
   * --concurrency-schedule: false when `slot` takes part now; else it was
   * parked until its stair starts, or retired (idle: its stairs are over, or
   * come after the window's end).
   */
  outOfTurn(slot: Slot, now: number): boolean {
    const span = this.plan.slotSpans?.[slot.index]
    if (!span) return false
    const at = now - this.startedAt
    if (at >= span.fromMs && at < span.untilMs) return false
    const late = this.plan.durationMs !== null && span.fromMs >= this.plan.durationMs
    if (at >= span.untilMs || span.fromMs === Infinity || late || this.#stopping) this.slotIdle(slot)
    else slot.park(span.fromMs - at)
    return true
  }

  /** Open loop: the fixed schedule; closed loop: -1 (start now). */
  intendedStart(seq: number): number {
    if (this.#interval === 0) return -1
    const times = this.plan.sendTimes
    return this.#scheduleStart + (times ? times.at(seq) : seq * this.#interval)
  }

  /** A scheduled window: one more send in the second `now` falls in (bounded, as the timeline is). */
  countSend(now: number): void {
    const perSecond = this.sentPerSecond!
    const second = Math.floor((now - this.startedAt) / 1000)
    if (second >= MAX_POINTS) return
    while (perSecond.length <= second) perSecond.push(0)
    perSecond[second]!++
  }

  isLate(intended: number, now: number): boolean {
    return this.#interval > 0 && now - intended > LATE_SEND_MS
  }

  lane(): Lane {
    const lanes = this.plan.lanes
    const i = lanes.length === 1 || !this.plan.chooseLane ? 0 : this.plan.chooseLane()
    const group = Math.floor(i / this.#skipGroup)
    if (this.#skipLeft[group]! > 0) {
      this.#skipLeft[group]!--
      return this.plan.skip!.lanes[i]!
    }
    return lanes[i]!
  }

  /** The per-request log asked us to wait: park the slot until it drains. */
  parkForDrain(slot: Slot): void {
    this.#waitingForDrain.push(slot)
    if (this.#draining || !this.plan.sink) return
    this.#draining = true
    void this.plan.sink.waitForDrain().then(() => {
      this.#draining = false
      const waiting = this.#waitingForDrain
      this.#waitingForDrain = []
      for (const s of waiting) s.begin()
    })
  }

  slotIdle(_slot: Slot): void {
    if (++this.#idle === this.#slots.length) this.#resolve?.()
  }
}

class Slot {
  readonly calls: Call[]
  lane: Lane | null = null
  seq = 0
  intendedAt = 0
  sentAt = 0
  pending = 0
  timer: NodeJS.Timeout | null = null
  /** Waiting for its turn (--concurrency-schedule), with no request taken. */
  parked = false
  /** Handed to the lane's statistics at each request's end: one object per slot, refilled, not one per request. */
  readonly #sample: RequestSample = { latencyMs: 0, serviceMs: null, status: null, error: null, bytes: 0, message: null, outcome: null, endAt: 0 }
  #starting = false
  #finishedWhileStarting = false
  #late = false
  /** Times the schedule's timer was armed again for the rest of an early firing. */
  #rearms = 0

  constructor(
    readonly win: LoadWindow,
    fanout: number,
    readonly index: number,
  ) {
    this.calls = Array.from({ length: fanout }, () => new Call(this))
  }

  begin(): void {
    const now = eventNow()
    if (this.win.outOfTurn(this, now)) return
    const seq = this.win.take(now)
    if (seq < 0) return this.win.slotIdle(this)
    this.seq = seq
    const intended = this.win.intendedStart(seq)
    if (intended > now) {
      this.intendedAt = intended
      this.timer = setTimeout(sendLater, intended - now, this)
      return
    }
    this.intendedAt = intended < 0 ? now : intended
    this.#late = intended >= 0 && this.win.isLate(intended, now)
    this.send(now)
  }

  /** The slot's first request, `ms` after the window's start (a spread start); stop() cancels the wait. */
  beginAfter(ms: number): void {
    this.timer = setTimeout(beginSpread, ms, this)
  }

  cancelWait(): void {
    clearTimeout(this.timer!)
    this.timer = null
    this.parked = false
    this.win.slotIdle(this)
  }

  /** Waits `ms` for its turn (--concurrency-schedule); stop() or the window's end cancels the wait. */
  park(ms: number): void {
    this.parked = true
    this.timer = setTimeout(unpark, ms, this)
  }

  /** The schedule's timer fired: send, unless it fired early (an open-loop send never leaves before its intended start, as in wrk2). */
  sendWhenDue(): void {
    const now = performance.now()
    const rest = stillEarly(now, this.intendedAt, this.#rearms)
    if (rest > 0) {
      this.#rearms++
      this.timer = setTimeout(sendLater, rest, this)
      return
    }
    this.#rearms = 0
    this.send(now)
  }

  /** `now`: performance.now() of the caller, when it just read it (one clock read per request, not two). */
  send(now = eventNow()): void {
    // A timer can fire up to a millisecond early: never measure from a start that has not come yet.
    if (this.intendedAt > now) this.intendedAt = now
    this.timer = null
    if (this.win.sentPerSecond) this.win.countSend(now)
    const lane = (this.lane = this.win.lane())
    if (this.#late) lane.stats.lateSends++
    this.#late = false
    this.pending = this.calls.length
    this.#starting = true
    this.sentAt = now
    const opts = lane.optsByOrigin ?? this.win.plan.optsByOrigin
    const nextBody = lane.nextBody ?? this.win.plan.nextBody
    for (const call of this.calls) {
      call.reset(lane.picker.next())
      const base = opts.get(call.origin)!
      lane.dispatch(nextBody === undefined ? base : { ...base, body: nextBody() }, call)
    }
    this.#starting = false
    // A request that failed synchronously must not recurse into the next one.
    if (this.#finishedWhileStarting) {
      this.#finishedWhileStarting = false
      setImmediate(beginLater, this)
    }
  }

  callDone(call: Call): void {
    if (this.calls.length > 1) {
      this.lane!.stats.recordCall(
        call.endAt - this.sentAt,
        call.error ? null : call.status,
        call.error,
        call.bytes,
        call.outcome,
        call.error ? null : call.message,
      )
    }
    // The last call to end ends the logical request: its end time is the request's.
    if (--this.pending === 0) this.complete(call.endAt)
  }

  complete(end: number): void {
    const lane = this.lane!
    const result = this.#summarize()
    const openLoop = this.win.plan.rate !== null
    // Open loop: from the intended start (a stall cannot hide). Closed loop:
    // from just before the dispatch, as hey measures: the time to open a new
    // connection (every HTTP/1.1 cancel costs one) is part of what a caller waits.
    const latencyMs = end - (openLoop ? this.intendedAt : this.sentAt)
    const s = this.#sample
    s.latencyMs = latencyMs
    s.serviceMs = openLoop ? end - this.sentAt : null
    s.status = result.error ? null : result.status
    s.error = result.error
    s.bytes = result.bytes
    s.message = result.error ? null : result.message
    s.outcome = result.outcome
    s.endAt = end
    lane.stats.recordRequest(s)
    this.win.completed++
    const full = this.#log(lane, latencyMs, result) === false
    if (full) this.win.parkForDrain(this)
    else if (this.#starting) this.#finishedWhileStarting = true
    else this.begin()
  }

  /** The call that decides the logical request: the first failure, else the slowest call. */
  #summarize(): Call {
    let decisive = this.calls[0]!
    for (const call of this.calls) {
      if (call.failed()) return call
      if (call.endAt > decisive.endAt) decisive = call
    }
    return decisive
  }

  #log(lane: Lane, latencyMs: number, call: Call): boolean {
    const sink = this.win.plan.sink
    if (!sink) return true
    const outcome = call.outcome
    return sink.write({
      phase: lane.stats.opts.name,
      ...(lane.target === undefined ? {} : { target: lane.target }),
      seq: this.seq,
      startMs: round3(this.intendedAt - this.win.plan.runStartedAt),
      latencyMs: round3(latencyMs),
      status: call.error ? null : call.status,
      error: call.error ? (lane.stats.opts.errorKind ?? errorKind)(call.error) : null,
      replica: outcome?.origin ?? call.origin,
      attempts: outcome?.launched ?? 1,
      winner: !outcome || outcome.winner < 0 ? 'none' : outcome.winner === 0 ? 'original' : `hedge-${outcome.winner}`,
      hedgeFiredMs: outcome?.hedgeFiredMs == null ? null : round3(outcome.hedgeFiredMs),
    })
  }
}

/** One call of a logical request (several with --fanout): the caller handler of a (hedged) dispatch. */
class Call implements HedgeCaller {
  origin = ''
  status: number | null = null
  /** The text its failed answer carried (grpc-message), if any. */
  message: string | null = null
  error: Error | null = null
  bytes = 0
  endAt = 0
  outcome: HedgeOutcome | null = null
  /** Only the status, byte count and timing matter here: undici's headers are never parsed. */
  readonly ignoresHeaders = true

  constructor(private readonly slot: Slot) {}

  reset(origin: string): void {
    this.origin = origin
    this.status = null
    this.message = null
    this.error = null
    this.bytes = 0
    this.outcome = null
  }

  failed(): boolean {
    return this.error !== null || this.status === null || !isOkStatus(this.status)
  }

  onRequestStart(): void {}

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode
  }

  onFinalStatus(status: number, message: string | null): void {
    this.status = status
    this.message = message
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.bytes += chunk.length
  }

  onResponseEnd(): void {
    this.endAt = eventNow()
    this.slot.callDone(this)
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.error = err
    this.endAt = eventNow()
    this.slot.callDone(this)
  }

  onHedgeOutcome(outcome: HedgeOutcome): void {
    this.outcome = outcome
  }
}

function sendLater(slot: Slot): void {
  slot.sendWhenDue()
}

function beginLater(slot: Slot): void {
  slot.begin()
}

function unpark(slot: Slot): void {
  slot.parked = false
  slot.timer = null
  slot.begin()
}

function beginSpread(slot: Slot): void {
  slot.timer = null
  slot.begin()
}
