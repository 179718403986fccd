/**
 * Running one measured window on this thread, the same for the main thread
 * (run.ts) and every worker thread (worker-thread.ts), so the two cannot
 * drift apart: the connections the thread's agent opens count for the
 * window's lanes, the generator is watched from `begin`, and at the end the
 * losing attempts get a bounded time to settle before the generator's
 * health is taken.
 */
import { GeneratorMonitor } from '../stats/generator-monitor.js'
import type { Lane, LoadWindow } from '../engine/load-generator.js'
import type { GeneratorHealth } from '../results/run-result.js'

/** How the window went, for each lane's finish(). */
export interface WindowEnd {
  /** performance.now() when the last logical request finished. */
  endedAt: number
  /** From the window's start to `endedAt`. */
  durationMs: number
  /** This thread's generator (one core) over the window. */
  health: GeneratorHealth
}

/** What the runner needs of the thread's connections (connection-pool.ts): what they cost, as it happens. */
export interface ConnectEvents {
  on(event: 'connect' | 'cancel-close' | 'stream-reset' | 'stream-resent', listener: () => void): unknown
  /** false while a connection closed by a cancel has not been counted yet. */
  settled?(): boolean
}

/** The connection events of a window: one lane's (the hedged lane of a run), or the window's own (a sweep's many lanes share the connections). */
export interface WindowConnections {
  connectionsOpened: number
  connectionsClosedByCancel: number
  streamsResetByCancel: number
  streamsResentAfterGoaway: number
}

export function noConnections(): WindowConnections {
  return { connectionsOpened: 0, connectionsClosedByCancel: 0, streamsResetByCancel: 0, streamsResentAfterGoaway: 0 }
}

export class WindowRunner {
  #lanes: readonly Lane[] = []
  #counted: WindowConnections | null = null
  #monitor: GeneratorMonitor | null = null
  readonly #drainTimeoutMs: number
  readonly #agent: ConnectEvents

  /**
   * @param agent the thread's connections, for all its windows
   * @param timeoutMs the per-attempt timeout (-t): how long a losing attempt may still take
   */
  constructor(agent: ConnectEvents, timeoutMs: number) {
    this.#drainTimeoutMs = Math.min(timeoutMs, 10_000) + 100
    this.#agent = agent
    agent.on('connect', () => {
      if (this.#counted) this.#counted.connectionsOpened++
    })
    agent.on('cancel-close', () => {
      if (this.#counted) this.#counted.connectionsClosedByCancel++
    })
    agent.on('stream-reset', () => {
      if (this.#counted) this.#counted.streamsResetByCancel++
    })
    agent.on('stream-resent', () => {
      if (this.#counted) this.#counted.streamsResentAfterGoaway++
    })
  }

  /**
   * The window's lanes are about to run: from now, connections count for
   * `counted` and the generator is watched. By default the last lane counts
   * them (with two lanes, interleaved, the hedged lane: the only one that cancels).
   */
  begin(lanes: readonly Lane[], counted: WindowConnections | null = lanes[lanes.length - 1]?.stats ?? null): void {
    this.#lanes = lanes
    this.#counted = counted
    this.#monitor = new GeneratorMonitor(1)
  }

  /**
   * Runs the window (begun), reporting progress while it sends; then waits
   * (bounded) until every attempt launched has made its last callback.
   * `hedgeDelayMs` lets the health check relate loop delay to the delay.
   */
  async run(window: LoadWindow, hedgeDelayMs: number | null, onProgress?: (done: number, elapsedMs: number) => void): Promise<WindowEnd> {
    for (const lane of this.#lanes) lane.stats.startAt(window.startedAt)
    const progress = onProgress ? setInterval(() => onProgress(window.completed, performance.now() - window.startedAt), PROGRESS_EVERY_MS) : null
    await window.run()
    if (progress) clearInterval(progress)
    const endedAt = performance.now()
    const lanes = this.#lanes
    // ... and until the connections their cancels closed have closed, so each is counted in this phase.
    await waitUntil(() => lanes.every((l) => l.stats.drained()) && this.#agent.settled?.() !== false, this.#drainTimeoutMs)
    const health = this.#monitor!.finish(hedgeDelayMs)
    this.#lanes = []
    this.#counted = null
    this.#monitor = null
    return { endedAt, durationMs: endedAt - window.startedAt, health }
  }
}

const PROGRESS_EVERY_MS = 250

/** Polls a condition (bounded): used at phase end while losing attempts settle. */
async function waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs
  while (!done()) {
    if (performance.now() > deadline) return false
    await new Promise((r) => setTimeout(r, 5))
  }
  return true
}
