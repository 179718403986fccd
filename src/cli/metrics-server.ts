/**
 * `--metrics-port [HOST:]PORT` (watch, run, sweep): a Prometheus exposition
 * while it runs, served with prom-client, named by Prometheus' conventions
 * (base units: `_seconds`; counters: `_total`), every series by lane
 * (plain, hedged) and, in a sweep, by setting (`setting="p90"`, as the
 * sweep's table names it). The latency histogram is fed once a second from
 * the second's HDR histogram (each recorded value with its count); the
 * counters are read from the lanes' own counts at each scrape. A scrape
 * that accepts OpenMetrics (`Accept: application/openmetrics-text`, as
 * Prometheus sends) gets it; any other, Prometheus' text format. POST /mark
 * (its body an optional name) marks as the key does.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { Counter, Gauge, type OpenMetricsContentType, type PrometheusContentType, Histogram as PromHistogram, Registry } from 'prom-client'
import { UsageError } from '../core/errors.js'
import { printable } from '../core/printable.js'
import { LANE_COUNT_KEYS, WATCH_LANES, type WatchLane } from '../results/watch-result.js'
import { eachRecordedMs, type Histogram } from '../stats/histogram.js'
import type { MarkSource } from '../results/watch-result.js'
import { LaneSampler } from '../stats/lane-seconds.js'
import type { PhaseStats } from '../stats/phase-stats.js'

/** A series' labels: its lane, and a sweep's setting (absent elsewhere: Prometheus reads an absent label as an empty one). */
export interface SeriesLabels {
  lane: WatchLane
  setting?: string
}

/** A lane's counts so far, as a scrape reads them. */
export type LaneTotals = ReturnType<LaneSampler['totals']> & { errorKinds: ReadonlyMap<string, number> }

/** What the counters read at a scrape: each series' counts so far (null before any lane started), and, for a watch, how a POST marks. */
export interface MetricsSource {
  series(): ReadonlyArray<{ labels: SeriesLabels; totals: LaneTotals }> | null
  mark?(name: string | undefined, source: MarkSource): { taken: boolean; line: string }
}

/** A watch's two lanes as series (its counts, or null before its measured window), and its marks. */
export function watchSource(watch: {
  totals(): Record<WatchLane, LaneTotals> | null
  mark(name: string | undefined, source: MarkSource): { taken: boolean; line: string }
}): MetricsSource {
  return {
    series: () => {
      const totals = watch.totals()
      return totals && WATCH_LANES.map((lane) => ({ labels: { lane }, totals: totals[lane] }))
    },
    mark: (name, source) => watch.mark(name, source),
  }
}

/** Seconds: Prometheus' default buckets with 1 and 2.5 ms below them, for services answering in a few milliseconds. */
export const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** A mark's name from an HTTP body: printable, one line, at most this long. */
const MAX_NAME = 100

export interface MetricsEndpoint {
  /** Where it listens (the port given, or the one chosen for 0). */
  host: string
  port: number
  /** A second's latencies of a series, into the histogram. */
  observe(labels: SeriesLabels, second: Histogram): void
  close(): Promise<void>
}

/** "9464" or "0.0.0.0:9464" (HOST:PORT); a bad value is a UsageError naming the flag. */
export function parseMetricsPort(text: string): { host: string; port: number } {
  const m = /^(?:(.+):)?(\d{1,5})$/.exec(text.trim())
  const port = m ? Number(m[2]) : Number.NaN
  if (!m || port > 65_535) throw new UsageError(`invalid --metrics-port "${text}" (a port, 9464, or HOST:PORT, 0.0.0.0:9464)`)
  return { host: (m[1] ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1'), port }
}

/** Listens now (before any traffic), so that a port in use is refused at once; the counts are read once `attach`ed. */
export async function startMetrics(
  at: { host: string; port: number },
  text: string,
): Promise<MetricsEndpoint & { attach(source: MetricsSource, onMark?: (line: string, ignored: boolean) => void): void }> {
  let source: MetricsSource | null = null
  let onMark: (line: string, ignored: boolean) => void = () => {}
  const read = (): ReturnType<MetricsSource['series']> => source?.series() ?? null
  // One registry per format, each with metrics of its own: prom-client renames a registry's counters for
  // OpenMetrics (it drops their `_total`, and adds it back per sample) in place, so the two cannot share them.
  const prometheus = exposition(Registry.PROMETHEUS_CONTENT_TYPE, read)
  const openMetrics = exposition(Registry.OPENMETRICS_CONTENT_TYPE, read)
  const server = createServer((req, res) => void respond(req, res))
  const respond = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]
    if (req.method === 'GET' && path === '/metrics') {
      const { registry } = acceptsOpenMetrics(req.headers.accept) ? openMetrics : prometheus
      const body = await registry.metrics()
      res.writeHead(200, { 'content-type': registry.contentType })
      res.end(body)
      return
    }
    if (req.method === 'POST' && path === '/mark') {
      const name = await body(req)
      if (!source) return reply(res, 409, 'mark ignored: no traffic yet (the watch has not started)')
      if (!source.mark) return reply(res, 409, 'marks only apply to `hedgebench watch`; ignored')
      const mark = source.mark(name === '' ? undefined : name, 'http')
      onMark(mark.line, !mark.taken)
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
    observe(labels, second) {
      eachRecordedMs(second, (ms, count) => {
        for (let i = 0; i < count; i++) {
          prometheus.latency.observe({ ...labels }, ms / 1000)
          openMetrics.latency.observe({ ...labels }, ms / 1000)
        }
      })
    },
    close: () => closeServer(server),
  }
}

/**
 * Whether a scrape's Accept header takes OpenMetrics: any `application/openmetrics-text` range not refused by `q=0`
 * (Prometheus asks for it first, then for the text format; curl asks for neither and gets the text format).
 */
export function acceptsOpenMetrics(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((range) => {
    const [type, ...params] = range.split(';').map((p) => p.trim().toLowerCase())
    const q = params.find((p) => p.startsWith('q='))
    return type === 'application/openmetrics-text' && (q === undefined || Number(q.slice(2)) > 0)
  })
}

const LABELS = ['lane', 'setting']

/** The metrics in one registry of the given format: the latency histogram (fed by `observe`), counters and the delay gauge read at each scrape. */
function exposition(contentType: PrometheusContentType | OpenMetricsContentType, read: MetricsSource['series']) {
  // prom-client's constructor takes the content type, though its typings do not declare it.
  const registry = new (Registry as unknown as new (type: typeof contentType) => Registry<PrometheusContentType> | Registry<OpenMetricsContentType>)(
    contentType,
  )
  const latency = new PromHistogram({
    name: 'hedgebench_request_duration_seconds',
    help: 'Latency of logical requests (the first good answer of a request and its hedges), by lane',
    labelNames: LABELS,
    buckets: LATENCY_BUCKETS_S,
    registers: [registry],
  })
  /** A counter of every series' totals, set at each scrape: `emit` gives its value (by kind, when it has one). */
  const counter = (name: string, help: string, emit: (t: LaneTotals, inc: (value: number, kind?: string) => void) => void, labelNames = LABELS): void => {
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        const series = read()
        if (!series) return
        this.reset()
        for (const { labels, totals } of series) emit(totals, (value, kind) => this.inc(kind === undefined ? { ...labels } : { ...labels, kind }, value))
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
    [...LABELS, 'kind'],
  )
  new Gauge({
    name: 'hedgebench_hedge_delay_seconds',
    help: "A hedged lane's current hedge delay (the rolling percentile, clamped), as its last request used it",
    labelNames: LABELS,
    registers: [registry],
    collect() {
      this.reset()
      for (const { labels, totals } of read() ?? []) if (labels.lane === 'hedged' && totals.delayMs !== null) this.set({ ...labels }, totals.delayMs / 1000)
    },
  })
  return { registry, latency }
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
 * --metrics-port on a run or a sweep: its plain and hedged lanes (a sweep's,
 * one per setting, named by `settings`), taken as each window starts
 * (run(options).onWindow), read once a second into the latency histogram;
 * the counters read their counts at each scrape. A mix's lanes (one per
 * target) of the same series are summed.
 */
export function runMetrics(
  metrics: MetricsEndpoint & { attach(source: MetricsSource): void },
  settings: readonly string[] = [],
): {
  onWindow(lanes: ReadonlyArray<{ name: string; stats: PhaseStats; setting?: number }>): void
  stop(): void
} {
  const series = new Map<string, { labels: SeriesLabels; samplers: LaneSampler[] }>()
  const read = (): void => {
    for (const { labels, samplers } of series.values())
      for (const sampler of samplers) {
        sampler.read(0)
        metrics.observe(labels, sampler.second)
      }
  }
  const timer = setInterval(read, 1000)
  timer.unref()
  metrics.attach({ series: () => [...series.values()].map(({ labels, samplers }) => ({ labels, totals: summed(samplers) })) })
  return {
    onWindow(lanes) {
      // Each window's lanes in turn; the last reading of the window before is taken first.
      read()
      const started = new Map<string, { labels: SeriesLabels; samplers: LaneSampler[] }>()
      for (const { name, stats, setting } of lanes) {
        if (name !== 'plain' && name !== 'hedged') continue
        const named = setting === undefined ? undefined : settings[setting]
        const labels: SeriesLabels = named === undefined ? { lane: name } : { lane: name, setting: named }
        const key = `${labels.lane}\n${labels.setting ?? ''}`
        const one = started.get(key) ?? started.set(key, { labels, samplers: [] }).get(key)!
        one.samplers.push(new LaneSampler(stats))
      }
      for (const [key, one] of started) series.set(key, one)
    },
    stop() {
      clearInterval(timer)
      read()
    },
  }
}

/** A series' counts: its lanes' summed (a mix: one lane per target); the delay only when it is one lane's (each target has its own). */
function summed(samplers: readonly LaneSampler[]): LaneTotals {
  if (samplers.length === 1) return { ...samplers[0]!.totals(), errorKinds: samplers[0]!.stats.figures.errorKinds }
  const errorKinds = new Map<string, number>()
  const out: LaneTotals = { ...samplers[0]!.totals(), delayMs: null, errorKinds }
  for (const key of LANE_COUNT_KEYS) out[key] = 0
  for (const sampler of samplers) {
    const t = sampler.totals()
    for (const key of LANE_COUNT_KEYS) out[key] += t[key]
    for (const [kind, n] of sampler.stats.figures.errorKinds) errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + n)
  }
  return out
}
