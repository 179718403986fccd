/**
 * A replica's bounded workers and waiting line (the model's `queue`): a job
 * takes a worker, waits, or is turned away. Apart from the HTTP replica's
 * request bookkeeping so the gRPC replica can share the same rule.
 */
import type { QueueSpec } from './latency-model.js'

export interface SlotJob {
  /** Called when the job gets a worker (at once, or from the waiting line). */
  run(): void
  /** Its service timer while it runs. */
  timer: NodeJS.Timeout | null
}

export class WorkerSlots<J extends SlotJob> {
  private active = 0
  private readonly waiting: J[] = []
  private closing = false

  constructor(private readonly queue: QueueSpec | null) {}

  /** 'started' or 'queued'; 'rejected' when every worker is busy and the line is full. */
  admit(job: J): 'started' | 'queued' | 'rejected' {
    if (!this.queue || this.active < this.queue.workers) {
      this.active++
      job.run()
      return 'started'
    }
    if (this.waiting.length < this.queue.depth) {
      this.waiting.push(job)
      return 'queued'
    }
    return 'rejected'
  }

  /**
   * The caller went away before the answer: a running job's timer is
   * cleared and its worker freed (as a real server stops work nobody
   * wants), a waiting one leaves the line.
   */
  drop(job: J, wasRunning: boolean): void {
    if (wasRunning) {
      if (job.timer) clearTimeout(job.timer)
      job.timer = null
      this.release()
      return
    }
    const i = this.waiting.indexOf(job)
    if (i >= 0) this.waiting.splice(i, 1)
  }

  /** A running job is done (answered or cancelled): its worker takes the next waiting job. */
  release(): void {
    this.active--
    if (this.closing) return
    const next = this.waiting.shift()
    if (next) {
      this.active++
      next.run()
    }
  }

  close(): void {
    this.closing = true
  }
}
