/**
 * One simulated gRPC replica: a @grpc/grpc-js server implementing the
 * bundled service (proto/hedgebench-sim.proto), whose Work call answers
 * after the latency the profile's model draws, with the same counting rules
 * as the HTTP replica (replica-server.ts), so a run's attempts can be
 * checked against what the server received, exactly:
 *
 *   received   when the call's handler runs (headers and message in)
 *   started    when its simulated work begins (out of the queue): the
 *              work a run's copies really cost, as the HTTP replica's
 *   stalled    a started call whose draw hit an independent stall
 *   completed  when the answer is handed to grpc-js (any status)
 *   cancelled  when the client went away before the answer: grpc-js emits
 *              'cancelled' also after a normal end, so only a call not yet
 *              answered counts; its timer is cleared and its worker freed
 *
 * A call carrying a sweep's lane (x-hedgebench-lane metadata, wire/stats.ts)
 * is counted under `lanes` too, by the same rules.
 *
 * It also counts the `grpc-previous-rpc-attempts` values it saw (a gRPC
 * client's hedges carry 1, 2, ...), which is how hedges sent are checked.
 *
 * A stalled call sends nothing before its stall ends: a unary answer's
 * headers, message and status leave together. A gRPC client commits to the
 * first attempt that sends headers, so headers before the stall would stop
 * its hedging and make the simulation lie about it.
 */
import { Server, ServerCredentials, status as grpcStatus } from '@grpc/grpc-js'
import type { handleUnaryCall, ServerUnaryCall, sendUnaryData, ServiceDefinition } from '@grpc/grpc-js'
import protobuf from 'protobufjs'
import { SIM_PROTO, SIM_SERVICE, SIM_WORK_CALL } from './grpc-sim-service.js'
import { grpcCodeForHttpStatus, grpcCodeName } from '../protocol/grpc-status.js'
import type { ReplicaModel, ServiceDraw } from './latency-model.js'
import { WorkerSlots } from './worker-slots.js'
import { addLanes, countLane, LANE_HEADER, laneOf, type LaneTotals } from '../wire/stats.js'

export { SIM_PROTO, SIM_SERVICE, SIM_WORK_CALL }
const PREVIOUS_ATTEMPTS = 'grpc-previous-rpc-attempts'

export interface GrpcReplicaCounts {
  received: number
  /** Calls whose work began (the rest were rejected, or cancelled while queued). */
  started: number
  /** Started calls whose draw hit an independent stall: the slow answers a run must count at least. */
  stalled: number
  completed: number
  cancelled: number
  /** Answered UNAVAILABLE at once because every worker was busy and the queue full. */
  rejected: number
  /** Answers by gRPC code name. */
  byStatus: Record<string, number>
  /** Calls carrying grpc-previous-rpc-attempts (hedges or retries of a gRPC client). */
  hedgeHeader: number
  /** How many calls carried each grpc-previous-rpc-attempts value. */
  previousAttempts: Record<string, number>
  /** received, started, completed and cancelled per sweep lane, by its x-hedgebench-lane value. */
  lanes: Record<string, LaneTotals>
}

export interface GrpcReplicaStats extends GrpcReplicaCounts {
  index: number
  url: string
}

/** What the Stats call returns (as JSON): the same outline as the HTTP replicas' ServerStats. */
export interface GrpcServerStats {
  profile: string
  seed: number
  hedgeHeaderName: string
  replicas: GrpcReplicaStats[]
  totals: GrpcReplicaCounts
}

interface Schema {
  request: protobuf.Type
  reply: protobuf.Type
  stats: protobuf.Type
}

let schema: Schema | null = null

/** The bundled proto, parsed once per process. */
export function simSchema(): Schema {
  if (schema) return schema
  const root = protobuf.loadSync(SIM_PROTO)
  schema = {
    request: root.lookupType('hedgebench.sim.v1.WorkRequest'),
    reply: root.lookupType('hedgebench.sim.v1.WorkReply'),
    stats: root.lookupType('hedgebench.sim.v1.StatsReply'),
  }
  return schema
}

/** State every gRPC replica of one target shares: the counters' epoch and the stats view. */
export class GrpcSimulationState {
  epoch = 0
  readonly replicas: GrpcReplica[] = []

  constructor(
    readonly profile: string,
    readonly seed: number,
  ) {}

  stats(): GrpcServerStats {
    const replicas = this.replicas.map((r) => r.stats())
    return { profile: this.profile, seed: this.seed, hedgeHeaderName: PREVIOUS_ATTEMPTS, replicas, totals: sumGrpcCounts(replicas) }
  }

  reset(): void {
    this.epoch++
    for (const r of this.replicas) r.resetCounts()
  }
}

interface Job {
  call: ServerUnaryCall<Buffer, Buffer>
  callback: sendUnaryData<Buffer>
  epoch: number
  state: 'queued' | 'running' | 'done'
  timer: NodeJS.Timeout | null
  replyBytes: number
  payloadBytes: number
  /** The sweep lane it carries, or null. */
  lane: string | null
  run(): void
}

const identity = (b: Buffer) => b

function unary(name: string): ServiceDefinition[string] {
  return {
    path: `/${SIM_SERVICE}/${name}`,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  }
}

const SERVICE: ServiceDefinition = { Work: unary('Work'), Stats: unary('Stats'), Reset: unary('Reset') }
/** Largest padding a caller may ask for: keeps a typo from allocating gigabytes. */
const MAX_REPLY_BYTES = 1 << 20

export class GrpcReplica {
  url = ''
  private counts = zeroGrpcCounts()
  private readonly slots: WorkerSlots<Job>
  private readonly server = new Server()

  constructor(
    readonly index: number,
    private readonly model: ReplicaModel,
    private readonly shared: GrpcSimulationState,
  ) {
    this.slots = new WorkerSlots(model.queue)
    const work: handleUnaryCall<Buffer, Buffer> = (call, callback) => this.onWork(call, callback)
    const stats: handleUnaryCall<Buffer, Buffer> = (_call, callback) => callback(null, encodeStats(shared.stats()))
    const reset: handleUnaryCall<Buffer, Buffer> = (_call, callback) => {
      shared.reset()
      callback(null, Buffer.alloc(0))
    }
    this.server.addService(SERVICE, { Work: work, Stats: stats, Reset: reset })
    shared.replicas.push(this)
  }

  /** Listens and resolves with the replica's grpc:// URL. */
  listen(port: number, host: string): Promise<string> {
    const shownHost = host.includes(':') ? `[${host}]` : host
    return new Promise((resolvePromise, reject) => {
      this.server.bindAsync(`${shownHost}:${port}`, ServerCredentials.createInsecure(), (err, bound) => {
        if (err) return reject(bindError(err))
        this.url = `grpc://${shownHost}:${bound}`
        resolvePromise(this.url)
      })
    })
  }

  close(): Promise<void> {
    this.slots.close()
    // forceShutdown cancels every open call, which clears each job's timer.
    this.server.forceShutdown()
    return Promise.resolve()
  }

  stats(): GrpcReplicaStats {
    return { index: this.index, url: this.url, ...structuredClone(this.counts) }
  }

  resetCounts(): void {
    this.counts = zeroGrpcCounts()
  }

  private onWork(call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void {
    const c = this.counts
    c.received++
    const lane = laneOf(call.metadata.get(LANE_HEADER), c.lanes)
    countLane(c.lanes, lane, 'received')
    const previous = call.metadata.get(PREVIOUS_ATTEMPTS)[0]
    if (previous !== undefined) {
      c.hedgeHeader++
      c.previousAttempts[String(previous)] = (c.previousAttempts[String(previous)] ?? 0) + 1
    }
    const request = decodeWorkRequest(call.request)
    const job: Job = {
      call,
      callback,
      epoch: this.shared.epoch,
      state: 'queued',
      timer: null,
      replyBytes: Math.min(request.replyBytes, MAX_REPLY_BYTES),
      payloadBytes: request.payloadBytes,
      lane,
      run: () => this.start(job),
    }
    call.on('cancelled', () => {
      if (job.state !== 'done') this.cancel(job)
    })
    if (this.slots.admit(job) === 'rejected') {
      if (job.epoch === this.shared.epoch) c.rejected++
      // The HTTP replica's 503, as the gRPC spec maps it (UNAVAILABLE: try another replica).
      this.answer(job, grpcCodeForHttpStatus(503), null, 'overloaded: all workers busy and queue full')
    }
  }

  private start(job: Job): void {
    job.state = 'running'
    const draw = this.model.draw()
    if (job.epoch === this.shared.epoch) {
      this.counts.started++
      if (draw.stalled) this.counts.stalled++
      countLane(this.counts.lanes, job.lane, 'started')
    }
    const now = performance.now()
    const finish = this.model.finishAt(now, draw.workMs)
    // Rounded up: Node truncates fractional delays, and a simulated server must never answer early.
    job.timer = setTimeout(() => this.finish(job, draw, finish - now), Math.max(0, Math.ceil(finish - now)))
  }

  private finish(job: Job, draw: ServiceDraw, serviceMs: number): void {
    job.timer = null
    this.slots.release()
    if (draw.status !== 200) return this.answer(job, grpcCodeForHttpStatus(draw.status), null, `simulated error (replica ${this.index})`)
    const reply = simSchema().reply
    const body = reply
      .encode({
        replica: this.index,
        serviceMs: Math.round(serviceMs * 100) / 100,
        stalled: draw.stalled,
        payloadBytes: job.payloadBytes,
        padding: Buffer.alloc(job.replyBytes),
      })
      .finish()
    this.answer(job, grpcStatus.OK, Buffer.from(body.buffer, body.byteOffset, body.byteLength), '')
  }

  private answer(job: Job, code: number, body: Buffer | null, details: string): void {
    if (job.epoch === this.shared.epoch) {
      this.counts.completed++
      countLane(this.counts.lanes, job.lane, 'completed')
      const name = grpcCodeName(code)
      this.counts.byStatus[name] = (this.counts.byStatus[name] ?? 0) + 1
    }
    job.state = 'done'
    if (code === grpcStatus.OK) job.callback(null, body)
    else job.callback({ code, details })
  }

  private cancel(job: Job): void {
    const wasRunning = job.state === 'running'
    job.state = 'done'
    if (job.epoch === this.shared.epoch) {
      this.counts.cancelled++
      countLane(this.counts.lanes, job.lane, 'cancelled')
    }
    this.slots.drop(job, wasRunning)
  }
}

/** A malformed Work request is still served (the simulation measures latency, not parsing). */
function decodeWorkRequest(bytes: Buffer): { replyBytes: number; payloadBytes: number } {
  try {
    const m = simSchema().request.decode(bytes) as unknown as { replyBytes?: number; payload?: string }
    return { replyBytes: m.replyBytes ?? 0, payloadBytes: Buffer.byteLength(m.payload ?? '') }
  } catch {
    return { replyBytes: 0, payloadBytes: bytes.length }
  }
}

function encodeStats(stats: GrpcServerStats): Buffer {
  const bytes = simSchema()
    .stats.encode({ json: JSON.stringify(stats) })
    .finish()
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

function bindError(err: Error): Error {
  const e = err as Error & { code?: string }
  if (/EADDRINUSE|address already in use/i.test(e.message)) return Object.assign(new Error(e.message), { code: 'EADDRINUSE' })
  return err
}

function zeroGrpcCounts(): GrpcReplicaCounts {
  return { received: 0, started: 0, stalled: 0, completed: 0, cancelled: 0, rejected: 0, byStatus: {}, hedgeHeader: 0, previousAttempts: {}, lanes: {} }
}

function sumGrpcCounts(list: GrpcReplicaCounts[]): GrpcReplicaCounts {
  const t = zeroGrpcCounts()
  for (const r of list) {
    for (const k of ['received', 'started', 'stalled', 'completed', 'cancelled', 'rejected', 'hedgeHeader'] as const) t[k] += r[k]
    for (const [s, n] of Object.entries(r.byStatus)) t.byStatus[s] = (t.byStatus[s] ?? 0) + n
    for (const [v, n] of Object.entries(r.previousAttempts)) t.previousAttempts[v] = (t.previousAttempts[v] ?? 0) + n
    addLanes(t.lanes, r.lanes)
  }
  return t
}
