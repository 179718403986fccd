import { test } from 'node:test'
import assert from 'node:assert/strict'
import { compareRuns } from '../src/report/compare.js'
import { UsageError } from '../src/core/errors.js'
import { checkFailIf, parseFailIf, showValue } from '../src/report/fail-if.js'
import { metricCells } from '../src/report/compare-format.js'
import { seededRandom } from '../src/core/random.js'
import { makeHedgedRun, makePhase, makeRunResult } from './helpers/result-fixture.js'

test('parses relative, absolute and unit forms', () => {
  assert.deepEqual(parseFailIf('p99>+10%'), { text: 'p99>+10%', metric: 'p99', op: '>', kind: 'relative', value: 10 })
  assert.deepEqual(parseFailIf('rps<-5%'), { text: 'rps<-5%', metric: 'rps', op: '<', kind: 'relative', value: -5 })
  assert.deepEqual(parseFailIf('p50>25ms'), { text: 'p50>25ms', metric: 'p50', op: '>', kind: 'absolute', value: 25 })
  assert.equal(parseFailIf('p99.9>=1.5s').value, 1500)
  assert.equal(parseFailIf('p99.9>=1.5s').op, '>=')
  assert.equal(parseFailIf('max<=800us').value, 0.8)
  assert.equal(parseFailIf('p99<2m').value, 120_000, 'every unit parseDuration takes')
  assert.equal(parseFailIf('mean > 12').value, 12)
  assert.deepEqual(parseFailIf(' error_rate>1% '), { text: 'error_rate>1%', metric: 'error_rate', op: '>', kind: 'absolute', value: 1 })
  assert.equal(parseFailIf('extra_load>10').value, 10)
  assert.equal(parseFailIf('slow>=1').metric, 'slow')
  assert.equal(parseFailIf('P99.99>.5ms').metric, 'p99.99')
})

test('bad conditions throw a one-line UsageError naming the condition and the valid forms', () => {
  for (const bad of [
    '',
    'p99',
    'p99>',
    '>10%',
    'p98>10ms',
    'p99=10ms',
    'p99>10%',
    'rps>10ms',
    'p99>+10ms',
    'p99>-5',
    'p99>ten',
    'error_rate>1s',
    'p99>>1',
    'p99>1e3',
    'p99>1\n>2',
  ]) {
    assert.throws(
      () => parseFailIf(bad),
      (err: unknown) => {
        assert.ok(err instanceof UsageError, `${JSON.stringify(bad)} throws UsageError`)
        assert.ok(!err.message.includes('\n'), `one line for ${JSON.stringify(bad)}`)
        assert.ok(err.message.includes(JSON.stringify(bad.trim()).slice(1, -1).slice(0, 20)), `names ${JSON.stringify(bad)}: ${err.message}`)
        assert.match(err.message, /p99>\+10%.*p50>25ms.*metrics: .*extra_load; operators: > < >= <=/)
        return true
      },
    )
  }
})

test('fuzz: a few thousand seeded random strings either parse or throw UsageError', () => {
  const next = seededRandom(2024)
  const alphabet = ['p', '9', '.', '>', '<', '=', '+', '-', '%', 'm', 's', 'u', 'µ', ' ', 'e', 'r', '_', '1', '0', 'x', '\n', '"', 'é', '\u0000', '🙂']
  const words = [
    'p99',
    'p50',
    'error_rate',
    'rps',
    'extra_load',
    'slow',
    'mean',
    'max',
    '>',
    '<',
    '>=',
    '<=',
    '+10%',
    '-5%',
    '25ms',
    '1s',
    '1%',
    '9'.repeat(400),
  ]
  let parsed = 0
  for (let i = 0; i < 4000; i++) {
    const pick = (list: string[]) => list[Math.floor(next() * list.length)]!
    const mode = next()
    // A third shaped like conditions (metric, operator, value), so many parse; the rest noise.
    const text =
      mode < 0.33
        ? [pick(words.slice(0, 8)), pick(words.slice(8, 12)), pick(words.slice(12))].join(next() < 0.2 ? ' ' : '')
        : Array.from({ length: Math.floor(next() * 12) }, () => pick(mode < 0.66 ? words : alphabet)).join('')
    try {
      const c = parseFailIf(text)
      assert.ok(Number.isFinite(c.value), `finite value for ${JSON.stringify(text)}`)
      parsed++
    } catch (err) {
      assert.ok(err instanceof UsageError, `${JSON.stringify(text)} threw ${String(err)}`)
      assert.ok(!err.message.includes('\n'))
    }
  }
  assert.ok(parsed > 20, `some random conditions parse (${parsed})`)
})

function comparisonOf(beforeMs: number[], afterMs: number[], afterErrors = 0) {
  const before = makeRunResult({ phases: { plain: makePhase('plain', beforeMs, { durationMs: 1000 }) } })
  const after = makeRunResult({ phases: { plain: makePhase('plain', afterMs, { durationMs: 1000, errors: afterErrors }) } })
  return compareRuns([
    { name: 'before.json', result: before },
    { name: 'after.json', result: after },
  ])
}

test('conditions hold exactly at their thresholds, on runs after the first', () => {
  const c = comparisonOf(Array(100).fill(1), Array(100).fill(1.2), 2) // p50 1 -> 1.2 ms (+20 %; exact in HDR below 2 ms), 2 % errors
  const holds = (text: string) => checkFailIf([parseFailIf(text)], c)[0]!.holds
  assert.equal(c.metrics.find((m) => m.metric === 'p50')?.changes[1]?.pct, 20)
  assert.equal(holds('p50>+19%'), true)
  assert.equal(holds('p50>+20%'), false)
  assert.equal(holds('p50>=+20%'), true)
  assert.equal(holds('p50>=1.2ms'), true)
  assert.equal(holds('p50>1200us'), false)
  assert.equal(holds('p50<1.1'), false, 'the baseline (1 ms) is not checked')
  assert.equal(holds('error_rate>1%'), true)
  assert.equal(holds('error_rate>2%'), false)
  // From 0 errors any rise is an infinite relative change, but 2 of 100 is within noise of 0 of 100: a gate says what the table says.
  assert.equal(c.metrics.find((m) => m.metric === 'error_rate')?.changes[1]?.verdict, 'within noise')
  assert.equal(holds('error_rate>+50%'), false)
  assert.equal(holds('rps<-5%'), false)
  assert.equal(holds('extra_load>0'), false, 'no hedging: the metric is absent, the condition cannot hold')
  const [check] = checkFailIf([parseFailIf('p50>+10%')], c)
  assert.deepEqual(check!.runs, ['after.json'])
})

test('what a gate says it saw: the value in its unit, the change against the first run, and the runs a change could not be checked for', () => {
  // 1 ms -> 1.2 ms over 100 requests, 2 % errors: p99 of 100 cannot be bounded.
  const c = comparisonOf(Array(100).fill(1), Array(100).fill(1.2), 2)
  const [p50, errors, slow, rps, p99, p99abs, lower] = checkFailIf(
    ['p50>+10%', 'error_rate>1.5%', 'slow>=0', 'rps<=100000', 'p99>+10%', 'p99>1ms', 'p50<=1.2ms'].map(parseFailIf),
    c,
  )
  assert.deepEqual(p50!.observed, ["p50 = 1.2 ms (+20.0% against before.json's 1 ms)"])
  assert.deepEqual(errors!.observed, ['error_rate = 2%'], 'from 0 % there is no relative change to show')
  assert.deepEqual(slow!.observed, ['slow = 0'], 'a count, without a unit')
  assert.deepEqual(rps!.observed, ["rps = 100 req/s (+0.0% against before.json's 100 req/s)"])
  assert.deepEqual([p99!.holds, p99!.runs], [false, []], 'a change that 100 requests cannot bound does not hold')
  assert.deepEqual(p99!.unchecked, [{ run: 'after.json', why: 'not enough requests (n = 100 for p99; needs 368)' }])
  assert.deepEqual([p99abs!.holds, p99abs!.unchecked], [true, []], 'an absolute value is checked however few the requests')
  assert.deepEqual(p99abs!.observed, ["p99 = 1.2 ms (+20.0% against before.json's 1 ms)"])
  assert.equal(lower!.holds, true, '<= holds at the value itself')
})

test("a change within noise names its interval as the compare table shows it: in the metric's unit, signed, never a raw float", () => {
  // Two seeded samples of one distribution, 5 to 500 ms: every change within noise.
  const sample = (seed: number) => {
    const next = seededRandom(seed)
    return Array.from({ length: 200 }, () => 5 + 495 * next())
  }
  const c = comparisonOf(sample(1), sample(2), 2)
  for (const [metric, unit] of [
    ['p50', /µs|ms|s/],
    ['mean', /µs|ms|s/],
    ['error_rate', /%/],
  ] as const) {
    const row = c.metrics.find((m) => m.metric === metric)!
    assert.equal(row.changes[1]?.verdict, 'within noise', metric)
    // The table's interval cell, "[-158.5 ms, +637.0 ms]": the gate names the same two ends.
    const cell = metricCells(row)[4]!
    const [low, high] = cell.slice(1, -1).split(', ')
    const [line] = checkFailIf([parseFailIf(`${metric}>+1%`)], c)[0]!.lines
    assert.ok(line!.endsWith(` is within noise (interval ${low} to ${high})`), `${line} vs ${cell}`)
    for (const end of [low!, high!]) assert.match(end, new RegExp(`^[-+±]\\d+(\\.\\d+)? (${unit.source})$`), line)
  }
})

test('showValue: each metric in its own unit, four significant digits, none for a missing value', () => {
  assert.equal(showValue('p99', 63.24567), '63.25 ms')
  assert.equal(showValue('error_rate', 1.23456), '1.235%')
  assert.equal(showValue('extra_load', 3.5), '3.5%')
  assert.equal(showValue('rps', 980.44), '980.4 req/s')
  assert.equal(showValue('slow', 12), '12')
  assert.equal(showValue('p50', null), 'none')
})

test('each bad condition says what is wrong with it, and every one lists the same forms', () => {
  const FORMS =
    'use [PHASE.]METRIC OP VALUE, e.g. p99>+10% (change from the first run), p50>25ms, hedged.p99>50ms, error_rate>1%, rps<-5%, extra_load>10; ' +
    'metrics: min p10 p25 p50 p75 p90 p95 p99 p99.9 p99.99 max mean stddev slow error_rate rps extra_load; operators: > < >= <='
  const a57 = 'a'.repeat(57)
  for (const [text, why] of [
    ['p99', 'not understood'],
    ['1p99>10ms', 'not understood'],
    ['p98>10ms', 'unknown metric "p98"'],
    ['xplain.p99>1ms', 'unknown metric "xplain.p99"'],
    ['p99>10%', 'p99 is not a percentage; write a change as +N% or -N%'],
    ['rps>10ms', 'rps is not a latency; drop the unit "ms"'],
    ['slow>1ms', 'slow is not a latency; drop the unit "ms"'],
    ['extra_load>1s', 'extra_load is not a latency; drop the unit "s"'],
    ['p99>ten', 'bad value "ten"'],
    ['p99>x+10%', 'bad value "x+10%"'],
    ['p99>+10%x', 'bad value "+10%x"'],
    ['error_rate>x1%', 'bad value "x1%"'],
    ['error_rate>1%x', 'bad value "1%x"'],
    [`p99>+${'9'.repeat(400)}%`, 'value too large'],
  ] as const) {
    assert.throws(
      () => parseFailIf(text),
      new UsageError(`invalid --fail-if ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)}: ${why}; ${FORMS}`),
      text,
    )
  }
  // Up to 60 characters are quoted whole; beyond, 57 and an ellipsis, in the condition and in the name.
  assert.throws(() => parseFailIf(`${'a'.repeat(61)}>1`), new UsageError(`invalid --fail-if "${a57}...": unknown metric "${a57}..."; ${FORMS}`))
  assert.throws(
    () => parseFailIf(`${'a'.repeat(58)}>1`),
    new UsageError(`invalid --fail-if "${'a'.repeat(58)}>1": unknown metric "${'a'.repeat(58)}"; ${FORMS}`),
  )
})

test('values with decimals, or only decimals, in changes and percentages', () => {
  assert.deepEqual(
    ['p99>+1.25%', 'p99>-.25%', 'error_rate>12%', 'error_rate>1.25%', 'error_rate>.25%'].map((t) => parseFailIf(t).value),
    [1.25, -0.25, 12, 1.25, 0.25],
  )
})

test('every operator on both sides of its threshold; a missing value holds nothing, not even "<"', () => {
  const c = comparisonOf(Array(100).fill(1), Array(100).fill(1.2)) // p50 1.2 ms after, 0 errors on both sides
  const holds = (text: string) => checkFailIf([parseFailIf(text)], c)[0]!.holds
  assert.deepEqual(['p50>=1ms', 'p50>=2ms', 'p50<=1ms', 'p50<=2ms', 'p50<1.2ms', 'p50<2ms', 'p50>1ms', 'p50>1.2ms'].map(holds), [
    true,
    false,
    false,
    true,
    false,
    true,
    true,
    false,
  ])
  assert.equal(holds('extra_load<5'), false, 'no hedging: no extra load to be below anything')
  // 0 % -> 0 %: no change, within noise: no change gate holds on it, whatever its operator.
  assert.equal(holds('error_rate<=+0%'), false)
  assert.equal(holds('error_rate>+0%'), false)
  const [missing] = checkFailIf([parseFailIf('extra_load>+10%')], c)
  assert.deepEqual([missing!.holds, missing!.unchecked], [false, []], 'a change with nothing to compare is not "not enough requests"')
})

test('a fall is shown with its minus sign', () => {
  const c = comparisonOf(Array(100).fill(1.2), Array(100).fill(1))
  const [check] = checkFailIf([parseFailIf('p50<-10%')], c)
  assert.deepEqual(check!.observed, ["p50 = 1 ms (-16.7% against before.json's 1.2 ms)"])
})

test('a value with nothing to compare it to (no hedging in the first run) is shown alone', () => {
  const before = makeRunResult({ phases: { plain: makePhase('plain', Array(100).fill(1), { durationMs: 1000 }) } })
  const c = compareRuns([
    { name: 'before.json', result: before },
    { name: 'after.json', result: makeHedgedRun() },
  ])
  const [check] = checkFailIf([parseFailIf('extra_load>1')], c)
  assert.deepEqual([check!.holds, check!.observed], [true, ['extra_load = 3.45%']])
})
