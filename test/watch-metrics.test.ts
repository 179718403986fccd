/**
 * --metrics-port beyond a watch's two lanes: a sweep's series, one per
 * setting (`setting="p90"`), and the OpenMetrics exposition for a scrape
 * that accepts it; each read by the parser of its own format
 * (test/helpers/prometheus-parser.ts), never by string matching.
 */
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { acceptsOpenMetrics } from '../src/cli/metrics-server.js'
import { YOUNG_GENERATION_FLAGS } from '../src/cli/launcher.js'
import { startTarget } from '../src/sim/target.js'
import { startCli } from './helpers/cli.js'
import { hasPrometheusParser, parseExposition, type Families } from './helpers/prometheus-parser.js'
import { skipWithout } from './helpers/required-tool.js'
import { untilAsync } from './helpers/until.js'

const target = await startTarget({ profile: 'pi', replicas: 3, seed: 48 })
after(() => target.close())
const fast = { nodeArgs: YOUNG_GENERATION_FLAGS, timeoutMs: 60_000 }
const base = [...target.urls, '--warmup', '60', '--seed', '5', '--no-save']
const skip = skipWithout(hasPrometheusParser, 'python3-prometheus-client', "Prometheus' parser (python3-prometheus-client) is not installed")

/** The endpoint's URL, once the command says where it listens. */
async function endpoint(cli: ReturnType<typeof startCli>): Promise<string> {
  await cli.waitForStderr(/metrics at http:\/\/127\.0\.0\.1:\d+\/metrics/)
  return `http://127.0.0.1:${/127\.0\.0\.1:(\d+)\/metrics/.exec(cli.stderr)![1]}/metrics`
}

/** The series of a family's samples named `name`, as sorted [lane, setting] pairs (setting '' when absent). */
function seriesOf(families: Families, family: string, name: string): string[][] {
  return families[family]!.samples.filter(([n]) => n === name)
    .map(([, labels]) => [labels.lane ?? '', labels.setting ?? ''])
    .sort()
}

test("--metrics-port on a sweep: the plain lane, and each setting's hedged lane labelled by the setting's name", { skip, timeout: 90_000 }, async () => {
  const cli = startCli(['sweep', ...base, '-z', '6s', '-c', '8', '--hedge-delay', 'p90,p99', '--metrics-port', '127.0.0.1:0'], fast)
  const url = await endpoint(cli)
  const scrape = async (): Promise<Families> => parseExposition(await (await fetch(url)).text())
  // Every lane once a whole second of each has been read into the histogram.
  const counted = (f: Families): number =>
    (f.hedgebench_request_duration_seconds?.samples ?? []).filter(([n, , v]) => n === 'hedgebench_request_duration_seconds_count' && v > 0).length
  await untilAsync('every lane measured', async () => counted(await scrape()) === 3)
  const families = await scrape()
  const lanes = [
    ['hedged', 'p90'],
    ['hedged', 'p99'],
    ['plain', ''],
  ]
  assert.deepEqual(seriesOf(families, 'hedgebench_requests', 'hedgebench_requests_total'), lanes)
  assert.deepEqual(seriesOf(families, 'hedgebench_request_duration_seconds', 'hedgebench_request_duration_seconds_count'), lanes)
  assert.deepEqual(seriesOf(families, 'hedgebench_hedge_delay_seconds', 'hedgebench_hedge_delay_seconds'), lanes.slice(0, 2))
  // Each setting its own delay: the p99 of the warm-up is no shorter than its p90.
  const delay = (setting: string): number => families.hedgebench_hedge_delay_seconds!.samples.find(([, l]) => l.setting === setting)![2]
  assert.ok(delay('p90') > 0 && delay('p99') >= delay('p90'), `p90 ${delay('p90')} s, p99 ${delay('p99')} s`)
  const mark = await fetch(url.replace(/metrics$/, 'mark'), { method: 'POST' })
  assert.equal(mark.status, 409)
  const run = await cli.done
  assert.equal(run.code, 0, run.stderr)
})

test('a scrape that accepts OpenMetrics gets OpenMetrics, any other the text format; each parses by its own parser', { skip, timeout: 60_000 }, async () => {
  const cli = startCli(['watch', ...base, '-q', '200', '-z', '5s', '--metrics-port', '127.0.0.1:0'], fast)
  const url = await endpoint(cli)
  // What Prometheus 2.x sends: OpenMetrics first, the text format as a fall-back.
  const prometheusAccept =
    'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
  const scrape = async (accept?: string): Promise<{ type: string | null; text: string }> => {
    const res = await fetch(url, accept === undefined ? {} : { headers: { accept } })
    return { type: res.headers.get('content-type'), text: await res.text() }
  }
  await untilAsync('both lanes counted', async () => {
    const f = parseExposition((await scrape()).text)
    return (f.hedgebench_requests?.samples ?? []).filter(([, , v]) => v > 0).length === 2
  })
  // OpenMetrics first: the text format after it must still name its counters `_total` (prom-client renames them in place for OpenMetrics).
  const open = await scrape(prometheusAccept)
  assert.equal(open.type, 'application/openmetrics-text; version=1.0.0; charset=utf-8')
  const text = await scrape()
  assert.equal(text.type, 'text/plain; version=0.0.4; charset=utf-8')
  for (const [format, families] of [
    ['openmetrics', parseExposition(open.text, 'openmetrics')],
    ['prometheus', parseExposition(text.text, 'prometheus')],
  ] as const) {
    assert.equal(families.hedgebench_requests?.type, 'counter', format)
    assert.deepEqual(
      seriesOf(families, 'hedgebench_requests', 'hedgebench_requests_total'),
      [
        ['hedged', ''],
        ['plain', ''],
      ],
      format,
    )
    assert.equal(families.hedgebench_request_duration_seconds?.type, 'histogram', format)
    assert.equal(families.hedgebench_hedge_delay_seconds?.type, 'gauge', format)
  }
  // The text format is not OpenMetrics (no `# EOF`): the strict parser refuses it, so the negotiation is what made the first one parse.
  assert.throws(() => parseExposition(text.text, 'openmetrics'))
  const run = await cli.done
  assert.equal(run.code, 0, run.stderr)
})

test('acceptsOpenMetrics: an openmetrics-text range not refused by q=0', () => {
  assert.equal(acceptsOpenMetrics(undefined), false)
  assert.equal(acceptsOpenMetrics('*/*'), false)
  assert.equal(acceptsOpenMetrics('text/plain;version=0.0.4'), false)
  assert.equal(acceptsOpenMetrics('application/openmetrics-text'), true)
  assert.equal(acceptsOpenMetrics('text/plain;q=0.5, Application/OpenMetrics-Text; version=1.0.0; q=0.9'), true)
  assert.equal(acceptsOpenMetrics('application/openmetrics-text;q=0, text/plain'), false)
})
