/**
 * `--fail-if` on a run itself (issue #16): compare's conditions, able to name
 * a phase, checked on real runs against a server on 127.0.0.1; exit 1 when
 * one holds (named on stderr with the value seen), 2 for a condition the
 * run cannot answer, before anything is sent.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { YOUNG_GENERATION_FLAGS } from '../src/cli/launcher.js'
import { killAllChildren, startCli, stderrLines } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { until } from './helpers/until.js'
import { startServer, type CountingServer } from './helpers/servers.js'
import { parseFailIf } from '../src/report/fail-if.js'
import { assertCheckable, checkErrorLimit, checkRunFailIf } from '../src/report/run-fail-if.js'
import type { RunResult } from '../src/results/run-result.js'
import { UsageError } from '../src/core/errors.js'
import { makeHedgedRun } from './helpers/result-fixture.js'

const servers: CountingServer[] = []
after(async () => {
  killAllChildren()
  await Promise.all(servers.map((s) => s.close()))
})

async function server(delayMs: number): Promise<CountingServer> {
  const s = await startServer({ delayMs })
  servers.push(s)
  return s
}

const small = ['-n', '20', '-c', '2', '--warmup', '4', '--no-save']

/**
 * The exit code a run's gates give: `expected`, unless the generator was
 * saturated on this machine (a busy one can be), which makes them
 * inconclusive (exit 3), said on stderr: the product's answer, not a pass.
 */
function assertGateCode(run: { code: number | null; stderr: string }, expected: number): void {
  const inconclusive = /^hedgebench: gates inconclusive \(exit 3\): the load generator was saturated in the \w+ phase/m.test(run.stderr)
  assert.equal(run.code, inconclusive ? 3 : expected, run.stderr)
}

test('a phase may be named before the metric; metrics keep their own dots', () => {
  assert.deepEqual(parseFailIf('hedged.p99.9>50ms'), { text: 'hedged.p99.9>50ms', metric: 'p99.9', op: '>', kind: 'absolute', value: 50, phase: 'hedged' })
  assert.equal(parseFailIf('plain.error_rate>1%').phase, 'plain')
  assert.equal(parseFailIf('p99.9>50ms').phase, undefined)
  assert.throws(() => parseFailIf('warmup.p99>5ms'), /unknown metric/)
})

test('a run exits 1 when a condition holds, naming it and the value seen; 0 when none does', async () => {
  // Every answer takes >= 30 ms, so p99 of either phase is above 10 ms and far below 5 s.
  const s = await server(30)
  const held = await runMain([s.url, ...small, '--fail-if', 'hedged.p99>10ms', '--fail-if', 'plain.p50>5s'])
  assertGateCode(held, 1)
  // At least the server's 30 ms; how far above is the machine's, not the product's.
  assert.match(held.stderr, /--fail-if "hedged\.p99>10ms" holds: hedged p99 = ((3\d|[4-9]\d|[1-9]\d{2,})(\.\d+)? ms|[\d.]+ s)/)
  // Every gate says which way it went (issue 44).
  assert.match(held.stderr, /--fail-if "plain\.p50>5s" does not hold: plain p50 = /)
  assert.match(held.stdout, /hedged/, 'the report is still printed')
  const passed = await runMain([s.url, ...small, '--fail-if', 'p99>5s', '--fail-if', 'plain.error_rate>1%'])
  assertGateCode(passed, 0)
})

test('a change against plain that 20 requests cannot judge fails closed (exit 1), or passes knowingly with --allow-unjudged', async () => {
  const s = await server(2)
  const run = await runMain([s.url, ...small, '--fail-if', 'p99.9>-100%'])
  assertGateCode(run, 1)
  assert.match(
    run.stderr,
    /^hedgebench: --fail-if "p99\.9>-100%" not judged: not enough requests \(n = 20 for p99\.9; needs \d+\); failing closed \(--allow-unjudged lets it pass\)$/m,
  )
  const allowed = await runMain([s.url, ...small, '--fail-if', 'p99.9>-100%', '--allow-unjudged'])
  assertGateCode(allowed, 0)
  assert.match(allowed.stderr, /not judged: not enough requests .*; passing \(--allow-unjudged\)$/m)
})

test('extra_load and a URL after --fail-if (not swallowed as a second condition)', async () => {
  const s = await server(20)
  // A 1 ms delay against a 20 ms server fires a hedge for every request: extra load ~100 %.
  const run = await runMain([...small, '--hedge-delay', '1ms', '--hedge-budget', 'off', '--fail-if', 'extra_load>8%', s.url])
  assertGateCode(run, 1)
  assert.match(run.stderr, /"extra_load>8%" holds: hedged extra_load = (9\d|100)(\.\d+)?%/)
})

test('conditions the run cannot answer are refused before it starts (exit 2)', async () => {
  const s = await server(1)
  for (const [args, why] of [
    [['--mode', 'hedged', '--fail-if', 'plain.p99>1ms'], /no plain phase/],
    [['--mode', 'plain', '--fail-if', 'p99>+10%'], /needs --mode both/],
    [['--fail-if', 'hedged.p99>+10%'], /drop the phase name/],
    [['--fail-if', 'p99>'], /invalid --fail-if/],
  ] as const) {
    // One Node process, not the launcher's two: main()'s validation (see bad-input.test.ts).
    const run = await runMain([s.url, ...small, ...args])
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
    assert.match(run.stderr, why)
    assert.equal(run.stderr.trim().split('\n').length, 1, 'one line')
  }
  assert.equal(s.received, 0, 'nothing was sent')
})

test('which conditions a run of each mode can answer, checked in this process (the CLI cases above run it in a child)', () => {
  const refused = (text: string, mode: 'both' | 'plain' | 'hedged') => {
    try {
      assertCheckable([parseFailIf(text)], mode)
      return null
    } catch (err) {
      assert.ok(err instanceof UsageError, String(err))
      return err.message
    }
  }
  for (const mode of ['both', 'plain', 'hedged'] as const) {
    assert.equal(refused('p99>5ms', mode), null, mode)
    assert.equal(refused(`${mode === 'both' ? 'hedged' : mode}.p99>5ms`, mode), null, mode)
  }
  assert.equal(refused('plain.p99>5ms', 'both'), null)
  assert.equal(refused('p99>+10%', 'both'), null)
  assert.equal(refused('plain.p99>5ms', 'hedged'), '--fail-if "plain.p99>5ms": this run has no plain phase (--mode hedged)')
  assert.equal(refused('hedged.p99>5ms', 'plain'), '--fail-if "hedged.p99>5ms": this run has no hedged phase (--mode plain)')
  for (const mode of ['plain', 'hedged'] as const)
    assert.equal(refused('p99>+10%', mode), '--fail-if "p99>+10%": a change (+N% or -N%) compares the hedged phase with the plain one: it needs --mode both')
  // The phase name is refused first, in every mode: a change is always hedged against plain.
  for (const mode of ['both', 'plain', 'hedged'] as const)
    assert.equal(
      refused('hedged.p99>+10%', mode),
      '--fail-if "hedged.p99>+10%": a change (+N% or -N%) is the hedged phase against the plain one: drop the phase name',
    )
  // Every condition is checked, not only the first.
  assert.throws(() => assertCheckable([parseFailIf('p99>5ms'), parseFailIf('plain.p99>5ms')], 'hedged'), /no plain phase/)
})

test('compare refuses a phase-named condition and says to use --phase', async () => {
  const run = await runMain(['compare', 'a.json', 'b.json', '--fail-if', 'hedged.p99>1ms'])
  assert.equal(run.code, 2)
  assert.match(run.stderr, /--phase/)
})

test('a change is the hedged phase against plain, with its sign: a p99.9 cut by hedging holds "<-50%", not ">+10%"; swapped, the reverse', () => {
  // The fixture's p99.9: ~1 s plain (1 % stalls), ~31 ms hedged, over 4000 requests each: judged, not "not checked".
  const run = makeHedgedRun()
  const check = (text: string, r: RunResult): boolean => {
    const [c] = checkRunFailIf([parseFailIf(text)], r)
    assert.equal(c!.unchecked, undefined, `${text}: ${c!.observed}`)
    return c!.holds
  }
  assert.equal(check('p99.9>+10%', run), false)
  assert.equal(check('p99.9<-50%', run), true)
  const swapped: RunResult = {
    ...run,
    phases: {
      ...run.phases,
      plain: { ...run.phases.hedged!, name: 'plain' },
      hedged: { ...run.phases.plain!, name: 'hedged', hedging: run.phases.hedged!.hedging },
    },
  }
  assert.equal(check('p99.9>+10%', swapped), true)
  assert.equal(check('p99.9<-50%', swapped), false)
})

test('SIGTERM in the warm-up: every gate is named as not checked and the run exits 1 (gates fail closed)', async () => {
  const s = await server(50)
  const cli = startCli(
    [s.url, '-n', '20', '-c', '2', '--warmup', '400', '--no-save', '--fail-if', 'hedged.p99>1us', '--fail-if', 'p99>+10%', '--fail-on-errors', '0'],
    { nodeArgs: YOUNG_GENERATION_FLAGS, timeoutMs: 60_000 },
  )
  await until('warm-up requests to arrive', () => s.received >= 2)
  cli.child.kill('SIGTERM')
  const run = await cli.done
  assert.equal(run.code, 1, run.stderr)
  const notChecked = stderrLines(run).filter((l) => / not checked: .*failing closed$/.test(l))
  assert.deepEqual(notChecked, [
    'hedgebench: --fail-if "hedged.p99>1us" not checked: no hedged phase was measured (the run was interrupted); failing closed',
    'hedgebench: --fail-if "p99>+10%" not checked: no plain or hedged phase was measured (the run was interrupted); failing closed',
    'hedgebench: --fail-on-errors 0% not checked: no plain phase was measured (the run was interrupted); failing closed',
    'hedgebench: --fail-on-errors 0% not checked: no hedged phase was measured (the run was interrupted); failing closed',
  ])
})

test('a condition naming no phase is checked on the hedged phase of a both run, never on plain when hedged is missing', () => {
  const result = makeHedgedRun()
  delete result.phases.hedged
  const [check] = checkRunFailIf([parseFailIf('p99>1us')], result)
  assert.equal(check!.holds, false)
  assert.equal(check!.unmeasured, 'no hedged phase was measured (the run was interrupted)')
  const limit = checkErrorLimit(0, result)
  assert.deepEqual(limit.unmeasured, ['--fail-on-errors 0% not checked: no hedged phase was measured (the run was interrupted)'])
})

test('SIGTERM in the measured hedged phase: its gates are named as not checked and the run exits 1, not 0 on part of the run', async () => {
  // The hedge delay is above every answer: nothing but the stop ends an exchange early.
  const s = await server(50)
  const cli = startCli(
    [
      s.url,
      '--mode',
      'hedged',
      '-n',
      '100000',
      '-c',
      '2',
      '--warmup',
      '0',
      '--hedge-delay',
      '10s',
      '--no-save',
      '--fail-if',
      'p99>1h',
      '--fail-on-errors',
      '100',
    ],
    { nodeArgs: YOUNG_GENERATION_FLAGS, timeoutMs: 60_000 },
  )
  await until('measured requests to arrive', () => s.received >= 4)
  cli.child.kill('SIGTERM')
  const run = await cli.done
  assert.equal(run.code, 1, run.stderr)
  const notChecked = stderrLines(run).filter((l) => / not checked: .*failing closed$/.test(l))
  assert.equal(notChecked.length, 2, run.stderr)
  assert.match(
    notChecked[0]!,
    /^hedgebench: --fail-if "p99>1h" not checked: the hedged phase was interrupted \(\d+ requests measured, fewer than asked for\); failing closed$/,
  )
  assert.match(
    notChecked[1]!,
    /^hedgebench: --fail-on-errors 100% not checked: the hedged phase was interrupted \(\d+ requests measured, fewer than asked for\); failing closed$/,
  )
})

test('a phase stopped in, or whose requests the generator could not all send (EMFILE), fails its gates closed; a phase measured whole is checked', () => {
  const stopped = makeHedgedRun({ partial: true, stoppedIn: 'hedged' })
  const n = stopped.phases.hedged!.requests
  const interrupted = `the hedged phase was interrupted (${n} requests measured, fewer than asked for)`
  const checks = checkRunFailIf([parseFailIf('hedged.p99>1h'), parseFailIf('plain.p99>1h'), parseFailIf('plain.p99>1us'), parseFailIf('p99>+1000%')], stopped)
  assert.deepEqual(
    checks.map((c) => [c.holds, c.unmeasured]),
    [
      [false, interrupted],
      [false, undefined],
      [true, undefined],
      [false, interrupted],
    ],
  )
  assert.deepEqual(checkErrorLimit(100, stopped).unmeasured, [`--fail-on-errors 100% not checked: ${interrupted}`])

  // Interleaved phases share one window: a stop cuts both short.
  const mixed = makeHedgedRun({ partial: true, stoppedIn: 'hedged' })
  mixed.config.schedule = 'interleaved'
  assert.equal(checkErrorLimit(100, mixed).unmeasured.length, 2)

  const emfile = makeHedgedRun()
  emfile.phases.hedged!.generatorFailures = { EMFILE: 2764, EADDRNOTAVAIL: 1 }
  const [check] = checkRunFailIf([parseFailIf('p99>1h')], emfile)
  const why = "2765 of the hedged phase's requests failed on this machine before reaching the target (EMFILE 2764, EADDRNOTAVAIL 1)"
  assert.deepEqual([check!.holds, check!.unmeasured], [false, why])
  assert.deepEqual(checkErrorLimit(100, emfile).unmeasured, [`--fail-on-errors 100% not checked: ${why}`])
  assert.deepEqual(checkErrorLimit(100, makeHedgedRun()), { breaches: [], unmeasured: [] }, 'a whole run is checked')
})

test('a change against plain is said with its sign, or by its amount from a zero', () => {
  const run = makeHedgedRun()
  const observed = (text: string) => checkRunFailIf([parseFailIf(text)], run)[0]!.observed
  assert.equal(observed('p99.9>+10%'), 'hedged p99.9 changed -97.0% against plain, better beyond noise')
  assert.equal(observed('rps>+1%'), 'hedged rps changed +98.6% against plain, better beyond noise')
  assert.equal(observed('p99>-10%'), 'hedged p99 changed 0.0% against plain, within noise')
  assert.equal(observed('error_rate>+10%'), 'hedged error_rate changed by 0 against plain, within noise')
  assert.equal(observed('extra_load>+1%'), 'hedged extra_load changed by 3.45 against plain, worse beyond noise')
})

test('interleaved phases stopped: a change names both phases cut short', () => {
  const mixed = makeHedgedRun({ partial: true, stoppedIn: 'hedged' })
  mixed.config.schedule = 'interleaved'
  const [check] = checkRunFailIf([parseFailIf('p99>+10%')], mixed)
  const why =
    'the plain phase was interrupted (4000 requests measured, fewer than asked for); the hedged phase was interrupted (4000 requests measured, fewer than asked for)'
  assert.deepEqual([check!.holds, check!.observed, check!.unmeasured], [false, why, why])
})

test('--fail-on-errors: over the limit is a breach named with its share; at the limit is not; a plain run checks plain', () => {
  const run = makeHedgedRun()
  run.phases.hedged!.errors = 41
  run.phases.plain!.errors = 40
  assert.deepEqual(checkErrorLimit(1, run), {
    breaches: ['--fail-on-errors 1%: hedged error rate 1.03% (41 of 4000) is over it'],
    unmeasured: [],
  })
  const plainOnly = makeHedgedRun()
  plainOnly.config.mode = 'plain'
  delete plainOnly.phases.hedged
  plainOnly.phases.plain!.errors = 41
  assert.deepEqual(checkErrorLimit(1, plainOnly).breaches, ['--fail-on-errors 1%: plain error rate 1.03% (41 of 4000) is over it'])
  const [p99] = checkRunFailIf([parseFailIf('p99>1h')], plainOnly)
  assert.match(p99!.observed, /^plain p99 = /, 'a condition naming no phase is checked on plain in a plain run')
})
