/**
 * One simulated replica: a Node http server that answers any path after the
 * service time its latency model draws, and counts what it saw so a run can
 * check the client's numbers against the server's (the seed's lost-update
 * bug was caught exactly that way).
 *
 * Counting rules, all synchronous increments so they are exact:
 *   received   on the 'request' event (headers parsed)
 *   completed  when the answer is handed to the socket (any status, 503s included)
 *   cancelled  when the connection closes before the answer: the timer is
 *              cleared and the worker/queue slot released, as a real server
 *              stops work the caller no longer wants
 *   stalled    when a started request's draw hits an independent stall: it
 *              answers at least the stall late, whatever the client's load
 * so received = completed + cancelled + in flight. Requests received before a
 * reset are not counted after it. `/__hedgebench/*` is never counted.
 * A request carrying a sweep's lane (x-hedgebench-lane, wire/stats.ts) is
 * counted under `lanes` too, by the same rules (with its started and busy
 * time), so a sweep can show each setting's work at the server.
 *
 * Every replica speaks HTTP/1.1 and h2c (HTTP/2 with prior knowledge) on the
 * same port, told apart by the connection's first bytes (the h2 preface), so
 * `--http2` works against any replica and the stats stay reachable over
 * HTTP/1.1. On h2 each request is a stream: `received` counts streams,
 * `cancelled` streams reset before their answer. `connections` counts the
 * connections (HTTP/1.1) and sessions (h2) that carried a request, so the
 * stats fetches' own connections never count; `http2Streams` and
 * `http2StreamsReset` are the h2 share of `received` and `cancelled`.
 *
 * Writes (POST/PUT/PATCH) with an Idempotency-Key execute once per key across
 * every replica of the process (one store, as a real service's database).
 * The key is claimed when the work finishes, like an INSERT ... ON CONFLICT
 * DO NOTHING at commit: a hedge that finishes first executes, the slower copy
 * (if not cancelled) gets the stored answer. Same key with another body: 422.
 */
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createServer as createH2Server } from 'node:http2'
import type { Http2Server, Http2ServerRequest, Http2Session } from 'node:http2'
import { createServer as createNetServer } from 'node:net'
import type { AddressInfo, Server as NetServer, Socket } from 'node:net'
import type { ReplicaModel, ServiceDraw } from './latency-model.js'
import { addLanes, addPaths, CONTROL_PREFIX, countLane, countPath, LANE_HEADER, laneOf, TIE_HEADER, type LaneTotals, type StatsTotals } from '../wire/stats.js'
import { TieRegistry } from './tie-registry.js'

export { CONTROL_PREFIX, DEFAULT_HEDGE_HEADER, TIE_HEADER } from '../wire/stats.js'
const MAX_BODY_BYTES = 1 << 20
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH'])

/** The counters of the stats contract (wire/stats.ts), all of them kept, and more. */
export interface ReplicaCounts extends StatsTotals {
  received: number
  completed: number
  cancelled: number
  /** Answered 503 at once because every worker was busy and the queue full. */
  rejected: number
  byMethod: Record<string, number>
  byStatus: Record<string, number>
  /** Requests carrying the hedge header (any value). */
  hedgeHeader: number
  /** Distinct Idempotency-Key values this replica received. */
  idempotencyKeys: number
  /** Keyed writes answered from the store instead of executing again. */
  duplicatesSuppressed: number
  /** Writes actually executed. */
  executions: number
  /** Requests that began executing (took a worker): the work actually done, copies included. */
  started: number
  /** Started requests whose draw hit an independent stall: the slow answers a run must count at least. */
  stalled: number
  /** Time workers spent executing requests, ms (cancelled ones until they were stopped). */
  busyMs: number
  /** Tied copies dropped before they started because their twin started first (--tied). */
  tiedDropped: number
  /** Connections (HTTP/1.1) and h2 sessions that carried at least one request. */
  connections: number
  /** Requests received as h2 streams (part of `received`). */
  http2Streams: number
  /** h2 streams reset (or their session closed) before the answer (part of `cancelled`). */
  http2StreamsReset: number
  /** The same counts per sweep lane (received, completed, cancelled, started, busyMs), by its x-hedgebench-lane value. */
  lanes: Record<string, LaneTotals>
  /** Requests received per request-target (path and query), for a mix's cross-check per target. */
  paths: Record<string, number>
}

export interface ReplicaStats extends ReplicaCounts {
  index: number
  url: string
}

/** What GET /__hedgebench/stats returns. `totals` sums the replicas' fields. */
export interface ServerStats {
  profile: string
  seed: number
  hedgeHeaderName: string
  replicas: ReplicaStats[]
  totals: ReplicaCounts
}

interface StoredAnswer {
  bodyHash: string
  status: number
  body: string
}

/** State every replica of one target shares: the idempotency store and the stats view. */
export class SimulationState {
  epoch = 0
  executionSeq = 0
  readonly store = new Map<string, StoredAnswer>()
  readonly replicas: Replica[] = []
  /** Tied copies across every replica of the process (one registry, as the seed's servers tell each other). */
  readonly ties = new TieRegistry((tie) => this.replicas.some((r) => r.dropQueuedTwin(tie)))
  /** Lower-case, as Node presents header names. */
  readonly hedgeHeaderName: string

  constructor(
    readonly profile: string,
    readonly seed: number,
    hedgeHeaderName: string,
  ) {
    this.hedgeHeaderName = hedgeHeaderName.toLowerCase()
  }

  stats(): ServerStats {
    const replicas = this.replicas.map((r) => r.stats())
    return { profile: this.profile, seed: this.seed, hedgeHeaderName: this.hedgeHeaderName, replicas, totals: sumCounts(replicas) }
  }

  reset(): void {
    this.epoch++
    this.store.clear()
    for (const r of this.replicas) r.resetCounts()
  }
}

interface Job {
  req: IncomingMessage
  res: ServerResponse
  epoch: number
  body: Buffer[]
  bodyBytes: number
  state: 'reading' | 'queued' | 'running' | 'done'
  timer: NodeJS.Timeout | null
  /** When the body was in and the request asked for a worker. */
  admittedAt: number
  /** When a worker took it (0 until then). */
  startedAt: number
  /** The tie id it carries (--tied), or null. */
  tie: string | null
  /** An h2 stream (its cancel is a stream reset). */
  http2: boolean
  /** The sweep lane it carries, or null. */
  lane: string | null
}

export class Replica {
  url = ''
  private counts = zeroCounts()
  private keys = new Set<string>()
  private active = 0
  private readonly waiting: Job[] = []
  /** HTTP/1.1 requests. */
  private readonly server: Server
  /** h2c sessions (prior knowledge), handed over by `listener`. */
  private readonly h2: Http2Server
  /** Open sockets of either protocol, destroyed on close (the HTTP/1.1 server never listens, so it does not track them). */
  private readonly sockets = new Set<Socket>()
  /** The port: sends each connection to `server` or `h2` by its first bytes. */
  private readonly listener: NetServer
  /** Connections and sessions already counted in `connections`. */
  private seen = new WeakSet<object>()
  private closing = false
  /** Requests received since the replica started, across stats resets: what `dieAfter` counts. */
  private lifetimeReceived = 0

  constructor(
    readonly index: number,
    private readonly model: ReplicaModel,
    private readonly shared: SimulationState,
  ) {
    this.server = createServer({ noDelay: true, keepAlive: true }, (req, res) => this.onRequest(req, res))
    // Keep-alive long enough that a load generator's pooled connections are
    // reused across phases; request/headers timeouts only guard stuck uploads.
    this.server.keepAliveTimeout = 65_000
    this.server.headersTimeout = 70_000
    this.server.requestTimeout = 120_000
    // Node's compatibility API gives h2 streams the request/response shape used here.
    this.h2 = createH2Server({}, (req, res) => this.onRequest(req as unknown as IncomingMessage, res as unknown as ServerResponse))
    // A client vanishing mid-session is a cancel, counted on its streams.
    this.h2.on('session', (session: Http2Session) => session.on('error', () => {}))
    this.listener = createNetServer({ noDelay: true }, (socket) => this.route(socket))
    shared.replicas.push(this)
  }

  /** HTTP/2 with prior knowledge starts with the h2 preface ("PRI * HTTP/2.0"); anything else is HTTP/1.1. */
  private route(socket: Socket): void {
    this.sockets.add(socket)
    socket.on('close', () => this.sockets.delete(socket))
    socket.on('error', () => {})
    socket.once('data', (first: Buffer) => {
      socket.pause()
      socket.unshift(first)
      if (startsH2(first)) {
        // The h2 session reads what is buffered, then the socket's handle itself:
        // resuming the JS stream here would take bytes from it (GOAWAY INTERNAL_ERROR).
        this.h2.emit('connection', socket)
        return
      }
      this.server.emit('connection', socket)
      socket.resume()
    })
  }

  /** Listens and resolves with the replica's URL. */
  listen(port: number, host: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err)
      this.listener.once('error', onError)
      this.listener.listen(port, host, () => {
        this.listener.off('error', onError)
        const addr = this.listener.address() as AddressInfo
        const shownHost = addr.family === 'IPv6' || host.includes(':') ? `[${addr.address}]` : host
        this.url = `http://${shownHost}:${addr.port}/`
        resolve(this.url)
      })
    })
  }

  close(): Promise<void> {
    this.closing = true
    return new Promise((resolve) => {
      if (!this.listener.listening) return resolve()
      this.listener.close(() => resolve())
      // Destroying sockets fires each job's 'close', which clears its timer.
      for (const socket of this.sockets) socket.destroy()
    })
  }

  /**
   * A crash: stop listening and drop every connection, in-flight requests
   * included. New connections are refused (ECONNREFUSED) from then on, as
   * with a killed process; the counters stay readable for the cross-check.
   */
  die(): void {
    if (this.closing) return
    this.closing = true
    this.listener.close()
    for (const socket of this.sockets) socket.destroy()
  }

  get dead(): boolean {
    return this.closing
  }

  stats(): ReplicaStats {
    return { index: this.index, url: this.url, ...structuredClone(this.counts), idempotencyKeys: this.keys.size }
  }

  resetCounts(): void {
    this.counts = zeroCounts()
    this.keys = new Set()
    this.seen = new WeakSet()
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    if ((req.url ?? '').startsWith(CONTROL_PREFIX)) return this.control(req, res)
    const c = this.counts
    const method = req.method ?? 'GET'
    c.received++
    const lane = laneOf(req.headers[LANE_HEADER], c.lanes)
    countLane(c.lanes, lane, 'received')
    countPath(c.paths, req.url ?? '/')
    const session = (req as unknown as Http2ServerRequest).stream?.session
    const connection: object = session ?? req.socket
    if (!this.seen.has(connection)) {
      this.seen.add(connection)
      c.connections++
    }
    if (session) c.http2Streams++
    if (++this.lifetimeReceived === this.model.dieAfter) {
      c.cancelled++ // received, never answered: it dies with the replica
      countLane(c.lanes, lane, 'cancelled')
      return this.die()
    }
    c.byMethod[method] = (c.byMethod[method] ?? 0) + 1
    if (req.headers[this.shared.hedgeHeaderName] !== undefined) c.hedgeHeader++
    const key = idempotencyKey(req)
    if (key !== null) this.keys.add(key)

    const job: Job = {
      req,
      res,
      epoch: this.shared.epoch,
      body: [],
      bodyBytes: 0,
      state: 'reading',
      timer: null,
      admittedAt: 0,
      startedAt: 0,
      tie: tieOf(req),
      http2: session !== undefined,
      lane,
    }
    res.on('close', () => {
      if (job.state !== 'done') this.cancel(job)
    })
    req.on('error', () => {}) // an aborted upload surfaces as res 'close'
    req.on('data', (chunk: Buffer) => {
      job.bodyBytes += chunk.length
      if (job.bodyBytes <= MAX_BODY_BYTES) job.body.push(chunk)
    })
    req.on('end', () => this.admit(job))
  }

  /** Takes a worker, waits in the queue, or is turned away with 503. */
  private admit(job: Job): void {
    if (job.state !== 'reading') return
    job.admittedAt = performance.now()
    // A tied copy whose twin already started is dropped before it waits for a worker.
    if (job.tie !== null && this.shared.ties.twinStarted(job.tie)) return this.dropTied(job)
    if (job.bodyBytes > MAX_BODY_BYTES) return this.answer(job, 413, JSON.stringify({ error: 'body too large for the simulated target' }))
    const q = this.model.queue
    if (!q || this.active < q.workers) return this.start(job)
    if (this.waiting.length < q.depth) {
      job.state = 'queued'
      this.waiting.push(job)
      return
    }
    if (job.epoch === this.shared.epoch) this.counts.rejected++
    this.answer(job, 503, JSON.stringify({ error: 'overloaded: all workers busy and queue full' }))
  }

  private start(job: Job): void {
    if (job.tie !== null && !this.shared.ties.claim(job.tie)) return this.dropTied(job)
    job.state = 'running'
    this.active++
    const draw = this.model.draw()
    const now = performance.now()
    job.startedAt = now
    if (job.epoch === this.shared.epoch) {
      this.counts.started++
      if (draw.stalled) this.counts.stalled++
      countLane(this.counts.lanes, job.lane, 'started')
    }
    const finish = this.model.finishAt(now, draw.workMs)
    const queueMs = now - job.admittedAt
    // Rounded up: Node truncates fractional delays, and a simulated server must never answer early.
    job.timer = setTimeout(() => this.finish(job, draw, queueMs, finish - now), Math.max(0, Math.ceil(finish - now)))
  }

  private finish(job: Job, draw: ServiceDraw, queueMs: number, serviceMs: number): void {
    job.timer = null
    this.addBusy(job)
    this.release()
    // What the simulation intended, so a client can tell its own noise from the server's:
    // queue = waiting for a worker, sim = service time including pauses.
    const stall = draw.stalled ? ';desc="stall"' : ''
    job.res.setHeader('server-timing', `queue;dur=${queueMs.toFixed(2)}, sim;dur=${serviceMs.toFixed(2)}${stall}`)
    if (draw.status !== 200) return this.answer(job, draw.status, JSON.stringify({ error: 'simulated error', replica: this.index }))
    const method = job.req.method ?? 'GET'
    if (!WRITE_METHODS.has(method)) {
      return this.answer(job, 200, JSON.stringify({ replica: this.index, method, path: job.req.url, serviceMs: round2(serviceMs) }))
    }
    this.write(job, method)
  }

  /** A write: executes, or replays the stored answer for a key seen before. */
  private write(job: Job, method: string): void {
    const key = idempotencyKey(job.req)
    const body = Buffer.concat(job.body)
    const counting = job.epoch === this.shared.epoch
    if (key === null) {
      if (counting) this.counts.executions++
      return this.answer(job, 200, this.executionBody(method, null, body))
    }
    const bodyHash = createHash('sha256').update(body).digest('hex')
    const stored = this.shared.store.get(key)
    if (stored === undefined) {
      if (counting) this.counts.executions++
      const answer = { bodyHash, status: 200, body: this.executionBody(method, key, body) }
      this.shared.store.set(key, answer)
      return this.answer(job, answer.status, answer.body)
    }
    if (stored.bodyHash !== bodyHash) {
      return this.answer(job, 422, JSON.stringify({ error: 'Idempotency-Key reused with a different request body', key }))
    }
    if (counting) this.counts.duplicatesSuppressed++
    job.res.setHeader('idempotent-replayed', 'true')
    this.answer(job, stored.status, stored.body)
  }

  private executionBody(method: string, key: string | null, body: Buffer): string {
    const execution = ++this.shared.executionSeq
    return JSON.stringify({ replica: this.index, method, execution, idempotencyKey: key, bodyBytes: body.length })
  }

  private answer(job: Job, status: number, body: string): void {
    const counting = job.epoch === this.shared.epoch
    job.state = 'done'
    if (counting) {
      this.counts.completed++
      countLane(this.counts.lanes, job.lane, 'completed')
      this.counts.byStatus[status] = (this.counts.byStatus[status] ?? 0) + 1
    }
    const { res } = job
    // An h2 response has no `destroyed` of its own: its stream does.
    if (res.destroyed || (res as unknown as { stream?: { destroyed: boolean } }).stream?.destroyed) return
    res.setHeader('x-hedgebench-replica', String(this.index))
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  }

  private cancel(job: Job): void {
    const was = job.state
    job.state = 'done'
    if (job.epoch === this.shared.epoch) {
      this.counts.cancelled++
      countLane(this.counts.lanes, job.lane, 'cancelled')
      if (job.http2) this.counts.http2StreamsReset++
    }
    if (was === 'running') {
      if (job.timer) clearTimeout(job.timer)
      job.timer = null
      this.addBusy(job)
      this.release()
    } else if (was === 'queued') {
      const i = this.waiting.indexOf(job)
      if (i >= 0) this.waiting.splice(i, 1)
    }
  }

  private addBusy(job: Job): void {
    if (job.epoch !== this.shared.epoch) return
    const busyMs = performance.now() - job.startedAt
    this.counts.busyMs += busyMs
    countLane(this.counts.lanes, job.lane, 'busyMs', busyMs)
  }

  /**
   * Tied requests (the 'ask many servers' article): the copy whose twin already started is
   * dropped before it starts, and answered 409 with `x-hedgebench-tie:
   * dropped` so the client waits for the twin. Its worker is not taken.
   */
  private dropTied(job: Job): void {
    if (job.epoch === this.shared.epoch) this.counts.tiedDropped++
    job.res.setHeader(TIE_HEADER, 'dropped')
    this.answer(job, 409, JSON.stringify({ error: 'tied copy dropped: its twin started first' }))
  }

  /** The twin of a job that just started, if it waits in this replica's queue: dropped at once. */
  dropQueuedTwin(tie: string): boolean {
    const i = this.waiting.findIndex((j) => j.tie === tie)
    if (i < 0) return false
    const [twin] = this.waiting.splice(i, 1)
    this.dropTied(twin!)
    return true
  }

  /** Frees a worker and hands it to the next waiting request. */
  private release(): void {
    this.active--
    if (this.closing) return
    const next = this.waiting.shift()
    if (next) this.start(next)
  }

  private control(req: IncomingMessage, res: ServerResponse): void {
    req.resume()
    const path = (req.url ?? '').split('?')[0]
    const send = (status: number, value: unknown) => {
      const body = JSON.stringify(value)
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' })
      res.end(body)
    }
    if (path === `${CONTROL_PREFIX}stats` && (req.method === 'GET' || req.method === 'HEAD')) return send(200, this.shared.stats())
    if (path === `${CONTROL_PREFIX}reset` && req.method === 'POST') {
      this.shared.reset()
      return send(200, { reset: true })
    }
    if (path === `${CONTROL_PREFIX}kill` && req.method === 'POST') return this.killFromControl(req, send)
    send(404, { error: `unknown control endpoint (use GET ${CONTROL_PREFIX}stats, POST ${CONTROL_PREFIX}reset or POST ${CONTROL_PREFIX}kill?replica=N)` })
  }

  /** POST /__hedgebench/kill?replica=N: kill replica N of this target (after answering, when it is this one). */
  private killFromControl(req: IncomingMessage, send: (status: number, value: unknown) => void): void {
    const n = Number(new URL(req.url ?? '', 'http://x').searchParams.get('replica'))
    const victim = this.shared.replicas[n]
    if (!Number.isInteger(n) || !victim) return send(400, { error: `replica must be 0..${this.shared.replicas.length - 1}` })
    send(200, { killed: n, url: victim.url })
    setImmediate(() => victim.die())
  }
}

function tieOf(req: IncomingMessage): string | null {
  const raw = req.headers[TIE_HEADER]
  const tie = Array.isArray(raw) ? raw[0] : raw
  return tie === undefined || tie === '' ? null : tie
}

/** The client connection preface of HTTP/2 (RFC 9113 §3.4). */
const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')

/** The first bytes of a connection are (the start of) the h2 preface. */
function startsH2(first: Buffer): boolean {
  const n = Math.min(first.length, H2_PREFACE.length)
  return first.subarray(0, n).equals(H2_PREFACE.subarray(0, n))
}

function idempotencyKey(req: IncomingMessage): string | null {
  const raw = req.headers['idempotency-key']
  const key = Array.isArray(raw) ? raw[0] : raw
  return key === undefined || key === '' ? null : key
}

function zeroCounts(): ReplicaCounts {
  return {
    received: 0,
    completed: 0,
    cancelled: 0,
    rejected: 0,
    byMethod: {},
    byStatus: {},
    hedgeHeader: 0,
    idempotencyKeys: 0,
    duplicatesSuppressed: 0,
    executions: 0,
    started: 0,
    stalled: 0,
    busyMs: 0,
    tiedDropped: 0,
    connections: 0,
    http2Streams: 0,
    http2StreamsReset: 0,
    lanes: {},
    paths: {},
  }
}

function sumCounts(list: ReplicaCounts[]): ReplicaCounts {
  const t = zeroCounts()
  for (const r of list) {
    for (const k of [
      'received',
      'completed',
      'cancelled',
      'rejected',
      'hedgeHeader',
      'idempotencyKeys',
      'duplicatesSuppressed',
      'executions',
      'started',
      'stalled',
      'busyMs',
      'tiedDropped',
      'connections',
      'http2Streams',
      'http2StreamsReset',
    ] as const) {
      t[k] += r[k]
    }
    for (const [m, n] of Object.entries(r.byMethod)) t.byMethod[m] = (t.byMethod[m] ?? 0) + n
    for (const [s, n] of Object.entries(r.byStatus)) t.byStatus[s] = (t.byStatus[s] ?? 0) + n
    addLanes(t.lanes, r.lanes)
    addPaths(t.paths, r.paths)
  }
  return t
}

function round2(ms: number): number {
  return Math.round(ms * 100) / 100
}
