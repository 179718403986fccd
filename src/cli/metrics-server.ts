/**
 * `watch --metrics-port [HOST:]PORT`: a Prometheus exposition of the watch
 * while it runs, served with prom-client, named by Prometheus' conventions
 * (base units: `_seconds`; counters: `_total`), every series by lane
 * (plain, hedged). The latency histogram is fed once a second from the
 * second's HDR histogram (each recorded value with its count); the counters
 * are read from the lanes' own counts at each scrape. POST /mark (its body
 * an optional name) marks as the key does.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { Counter, Gauge, Histogram as PromHistogram, Registry } from 'prom-client'
import { UsageError } from '../core/errors.js'
import { printable } from '../core/printable.js'
import { WATCH_LANES, type WatchLane } from '../results/watch-result.js'
import { eachRecordedMs, type Histogram } from '../stats/histogram.js'
import type { MarkSource } from '../results/watch-result.js'
import { LaneSampler } from '../stats/lane-seconds.js'
import type { PhaseStats } from '../stats/phase-stats.js'

/** What the counters read at a scrape: each lane's counts so far (a lane not started yet is absent), and, for a watch, how a POST marks. */
export interface MetricsSource {
  totals(): Partial<Record<WatchLane, ReturnType<LaneSampler['totals']> & { errorKinds: ReadonlyMap<string, number> }>> | null
  mark?(name: string | undefined, source: MarkSource): { taken: boolean; line: string }
}

/** Seconds: Prometheus' default buckets with 1 and 2.5 ms below them, for services answering in a few milliseconds. */
export const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** A mark's name from an HTTP body: printable, one line, at most this long. */
const MAX_NAME = 100

export interface MetricsEndpoint {
  /** Where it listens (the port given, or the one chosen for 0). */
  host: string
  port: number
  /** A second's latencies of a lane, into the histogram. */
  observe(lane: WatchLane, second: Histogram): void
  close(): Promise<void>
}

/** "9464" or "0.0.0.0:9464" (HOST:PORT); a bad value is a UsageError naming the flag. */
export function parseMetricsPort(text: string): { host: string; port: number } {
  const m = /^(?:(.+):)?(\d{1,5})$/.exec(text.trim())
  const port = m ? Number(m[2]) : Number.NaN
  if (!m || port > 65_535) throw new UsageError(`invalid --metrics-port "${text}" (a port, 9464, or HOST:PORT, 0.0.0.0:9464)`)
  return { host: (m[1] ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1'), port }
}

/** Listens now (before any traffic), so that a port in use is refused at once; the watch's counts are read once `attach`ed. */
export async function startMetrics(
  at: { host: string; port: number },
  text: string,
): Promise<MetricsEndpoint & { attach(source: MetricsSource, onMark?: (line: string) => void): void }> {
  const registry = new Registry()
  let source: MetricsSource | null = null
  let onMark: (line: string) => void = () => {}
  const latency = new PromHistogram({
    name: 'hedgebench_request_duration_seconds',
    help: 'Latency of logical requests (the first good answer of a request and its hedges), by lane',
    labelNames: ['lane'],
    buckets: LATENCY_BUCKETS_S,
    registers: [registry],
  })
  type Totals = NonNullable<NonNullable<ReturnType<MetricsSource['totals']>>[WatchLane]>
  /** A counter of every lane's totals, set at each scrape: `emit` gives its value (by kind, when it has one). */
  const counter = (name: string, help: string, emit: (t: Totals, inc: (value: number, kind?: string) => void) => void, labelNames = ['lane']): void => {
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        const totals = source?.totals()
        if (!totals) return
        this.reset()
        for (const lane of WATCH_LANES) {
          const t = totals[lane]
          if (t) emit(t, (value, kind) => this.inc(kind === undefined ? { lane } : { lane, kind }, value))
        }
      },
    })
  }
  counter('hedgebench_requests_total', 'Logical requests finished, by lane', (t, inc) => inc(t.requests))
  counter('hedgebench_attempts_total', 'Attempts written to a connection (originals and hedges), by lane', (t, inc) => inc(t.attempts))
  counter('hedgebench_slow_requests_total', 'Logical requests slower than --slow, by lane', (t, inc) => inc(t.slow))
  counter('hedgebench_hedges_sent_total', 'Hedges sent (attempts after the original)', (t, inc) => inc(t.hedges))
  counter('hedgebench_hedges_won_total', 'Requests a hedge answered first', (t, inc) => inc(t.hedgeWins))
  counter('hedgebench_hedges_cancelled_total', 'Attempts cancelled because another copy of their request won (a losing original or hedge)', (t, inc) =>
    inc(t.cancelled),
  )
  counter('hedgebench_hedges_budget_denied_total', 'Hedges the budget (--hedge-budget) did not allow', (t, inc) => inc(t.budgetDenied))
  counter(
    'hedgebench_errors_total',
    'Failed logical requests by lane and kind: a transport error by its name, "status" for an answer with a failure status',
    (t, inc) => {
      let transport = 0
      for (const [kind, n] of t.errorKinds) {
        transport += n
        inc(n, kind)
      }
      inc(Math.max(0, t.errors - transport), 'status')
    },
    ['lane', 'kind'],
  )
  new Gauge({
    name: 'hedgebench_hedge_delay_seconds',
    help: "The hedged lane's current hedge delay (the rolling percentile, clamped), as its last request used it",
    labelNames: ['lane'],
    registers: [registry],
    collect() {
      const delay = source?.totals()?.hedged?.delayMs
      if (delay !== null && delay !== undefined) this.set({ lane: 'hedged' }, delay / 1000)
    },
  })
  const server = createServer((req, res) => void respond(req, res))
  const respond = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]
    if (req.method === 'GET' && path === '/metrics') {
      res.writeHead(200, { 'content-type': registry.contentType })
      res.end(await registry.metrics())
      return
    }
    if (req.method === 'POST' && path === '/mark') {
      const name = await body(req)
      if (!source) return reply(res, 409, 'mark ignored: no traffic yet (the watch has not started)')
      if (!source.mark) return reply(res, 409, 'marks only apply to `hedgebench watch`; ignored')
      const mark = source.mark(name === '' ? undefined : name, 'http')
      onMark(mark.line)
      return reply(res, mark.taken ? 200 : 409, mark.line)
    }
    reply(res, 404, 'GET /metrics, or POST /mark with an optional name as the body')
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new UsageError(
          err.code === 'EADDRINUSE'
            ? `--metrics-port ${text}: port ${at.port} is in use (EADDRINUSE)`
            : `--metrics-port ${text}: cannot listen on ${at.host}:${at.port} (${err.code ?? err.message})`,
        ),
      ),
    )
    server.listen(at.port, at.host, () => resolve())
  })
  const address = server.address()
  return {
    host: at.host,
    port: typeof address === 'object' && address ? address.port : at.port,
    attach(w, mark) {
      source = w
      if (mark) onMark = mark
    },
    observe(lane, second) {
      eachRecordedMs(second, (ms, count) => {
        for (let i = 0; i < count; i++) latency.observe({ lane }, ms / 1000)
      })
    },
    close: () => closeServer(server),
  }
}

function reply(res: ServerResponse, status: number, line: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' })
  res.end(`${line}\n`)
}

/** A request's body as a mark name: at most MAX_NAME printable characters of its first line. */
function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => {
      if (text.length < 4096) text += chunk
    })
    req.on('end', () =>
      resolve(
        printable(text.split(/\r?\n/)[0] ?? '')
          .trim()
          .slice(0, MAX_NAME),
      ),
    )
    req.on('error', () => resolve(''))
  })
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(() => resolve()))
}

/**
 * --metrics-port on a run: its plain and hedged lanes, taken as each window
 * starts (run(options).onWindow), read once a second into the latency
 * histogram; the counters read their counts at each scrape.
 */
export function runMetrics(metrics: MetricsEndpoint & { attach(source: MetricsSource): void }): {
  onWindow(lanes: ReadonlyArray<{ name: string; stats: PhaseStats }>): void
  stop(): void
} {
  const samplers: Partial<Record<WatchLane, LaneSampler>> = {}
  const read = (): void => {
    for (const lane of WATCH_LANES) {
      const sampler = samplers[lane]
      if (!sampler) continue
      sampler.read(0)
      metrics.observe(lane, sampler.second)
    }
  }
  const timer = setInterval(read, 1000)
  timer.unref()
  metrics.attach({
    totals: () => {
      const out: ReturnType<MetricsSource['totals']> = {}
      for (const lane of WATCH_LANES) {
        const sampler = samplers[lane]
        if (sampler) out[lane] = { ...sampler.totals(), errorKinds: sampler.stats.figures.errorKinds }
      }
      return out
    },
  })
  return {
    onWindow(lanes) {
      // Each window's lanes in turn; the last reading of the window before is taken first.
      read()
      for (const { name, stats } of lanes) if (name === 'plain' || name === 'hedged') samplers[name] = new LaneSampler(stats)
    },
    stop() {
      clearInterval(timer)
      read()
    },
  }
}
