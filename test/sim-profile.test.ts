import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { promisify } from 'node:util'
import { readdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { UsageError } from '../src/core/errors.js'
import { listProfiles, loadProfile, parseProfile, profilesDir } from '../src/sim/profile.js'
import { profileRunOptions } from '../src/cli/profile-options.js'
import { spawnTarget } from '../src/sim/target.js'
import { newAgent, timedRequest, writeTempProfile } from './helpers/sim.js'

const BIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../bin/hedgebench.js')

const valid = {
  name: 'tiny',
  description: 'test',
  replicas: 2,
  model: { base: { type: 'fixed', ms: 1 }, stalls: [{ type: 'independent', probability: 0.5, ms: 10 }] },
}

test('every profile in profiles/ loads and validates, named after its file', () => {
  const files = readdirSync(profilesDir()).filter((f) => f.endsWith('.json'))
  const listed = listProfiles()
  assert.equal(listed.length, files.length)
  for (const required of ['pi', 'gc-pause', 'shared-slow', 'checkout', 'overload', 'broken-replica']) {
    const p = loadProfile(required)
    assert.equal(p.name, required)
    assert.ok(p.description.length > 20, `${required} has a description`)
    assert.ok(listed.some((l) => l.name === required))
  }
  assert.equal(loadProfile('checkout').run?.fanout, 40)
  assert.equal(loadProfile('overload').run?.concurrency, 40)
  assert.equal(loadProfile('pi').replicas, 3)
  assert.deepEqual(loadProfile('broken-replica').model.overrides, [{ index: 2, addMs: 80 }])
})

test('a profile path loads the same as a name', () => {
  const byPath = loadProfile(resolve(profilesDir(), 'pi.json'))
  const byName = loadProfile('pi')
  assert.deepEqual(byPath, byName)
})

test('run defaults map onto library run options', () => {
  const opts = profileRunOptions(loadProfile('pi'))
  assert.equal(opts.concurrency, 4)
  assert.equal(opts.slowMs, 1000)
  assert.equal(opts.profile, 'pi')
  assert.deepEqual(opts.hedge, { delay: 'auto', budgetPct: 25 })
})

test('validation errors are one line naming the source and the field', () => {
  const cases: Array<[unknown, RegExp]> = [
    [
      { ...valid, model: { ...valid.model, stalls: [{ type: 'independent', probability: 1.5, ms: 10 }] } },
      /^x\.json: model\.stalls\[0\]\.probability must be a number between 0 and 1$/,
    ],
    [{ ...valid, replicas: 0 }, /^x\.json: replicas must be an integer between 1 and 64$/],
    [{ ...valid, model: { base: { type: 'uniform', min: 10, max: 5 } } }, /model\.base\.max must be >= model\.base\.min/],
    [{ ...valid, model: { base: { type: 'gaussian' } } }, /model\.base\.type must be one of "uniform", "lognormal", "fixed"/],
    [{ ...valid, model: { ...valid.model, stals: [] } }, /model\.stals is not a known field/],
    [{ ...valid, model: { ...valid.model, overrides: [{ index: 2, addMs: 5 }] } }, /model\.overrides\[0\]\.index must be an integer between 0 and 1/],
    [{ ...valid, model: { ...valid.model, queue: { workers: 0, depth: 1 } } }, /model\.queue\.workers must be an integer/],
    [{ ...valid, run: { hedgeDelay: 'soon' } }, /run\.hedgeDelay must be "auto"/],
    [{ ...valid, name: '' }, /^x\.json: name must be a non-empty string$/],
    [[1, 2], /\(top level\) must be an object/],
  ]
  for (const [json, pattern] of cases) {
    assert.throws(
      () => parseProfile(json, 'x.json'),
      (err: unknown) => {
        assert.ok(err instanceof UsageError, 'UsageError')
        assert.ok(!err.message.includes('\n'), 'one line')
        assert.match(err.message, pattern)
        return true
      },
    )
  }
})

test('run.hedgeDelay takes the forms --hedge-delay and the library take: auto, p0 < pNN < p100, ms >= 0', () => {
  for (const delay of ['auto', 'p95', 'p99.9', 15, 0]) assert.equal(parseProfile({ ...valid, run: { hedgeDelay: delay } }).run?.hedgeDelay, delay)
  for (const delay of ['p0', 'p100', 'p', 'P95', '15ms', -1, true]) {
    assert.throws(() => parseProfile({ ...valid, run: { hedgeDelay: delay } }, 'x.json'), { name: 'UsageError', message: /^x\.json: run\.hedgeDelay must be / })
  }
})

test('unknown names, missing files and bad JSON are UsageErrors', (t) => {
  assert.throws(() => loadProfile('no-such-profile'), /unknown profile "no-such-profile" \(available: .*pi/)
  assert.throws(() => loadProfile('/nonexistent/dir/p.json'), /p\.json: cannot read profile \(no such file\)/)
  const bad = writeTempProfile('{ "name": ', 'broken.json')
  t.after(() => bad.cleanup())
  assert.throws(
    () => loadProfile(bad.path),
    (err: unknown) => err instanceof UsageError && /broken\.json: not valid JSON/.test(err.message),
  )
})

test('an invalid profile through the CLI: one line on stderr naming file and field, exit 2', (t) => {
  const bad = writeTempProfile({ ...valid, model: { ...valid.model, stalls: [{ type: 'independent', probability: 2, ms: 10 }] } }, 'x.json')
  t.after(() => bad.cleanup())
  const r = spawnSync(process.execPath, [BIN, 'serve', '--profile', bad.path], { encoding: 'utf8', timeout: 15_000 })
  assert.equal(r.status, 2)
  assert.equal(r.stdout, '')
  const lines = r.stderr.trimEnd().split('\n')
  assert.equal(lines.length, 1, r.stderr)
  assert.match(lines[0]!, /x\.json: model\.stalls\[0\]\.probability must be a number between 0 and 1/)
})

test('bad serve options exit 2 with one line', async () => {
  const run = promisify(execFile)
  const cases = [
    ['--profile', 'nope'],
    ['--profile', 'pi', '--port', '70000'],
    ['--profile', 'pi', '--replicas', '0'],
    ['--profile', 'pi', '--hedge-header', 'a b'],
  ]
  // In parallel: each is a node start-up, slow on a busy machine.
  await Promise.all(
    cases.map(async (args) => {
      const err = await run(process.execPath, [BIN, 'serve', ...args], { timeout: 15_000 }).then(
        () => assert.fail(`${args.join(' ')} should fail`),
        (e: { code: number; stdout: string; stderr: string }) => e,
      )
      assert.equal(err.code, 2, `${args.join(' ')}: ${err.stderr}`)
      assert.equal(err.stdout, '')
      assert.equal(err.stderr.trimEnd().split('\n').length, 1, err.stderr)
    }),
  )
})

test('spawnTarget rejects an invalid profile with a UsageError before spawning', async (t) => {
  const bad = writeTempProfile({ ...valid, replicas: 'three' }, 'y.json')
  t.after(() => bad.cleanup())
  await assert.rejects(
    spawnTarget({ profile: bad.path }),
    (err: unknown) => err instanceof UsageError && /y\.json: replicas must be an integer/.test(err.message),
  )
})

test('spawnTarget serves a profile object changed in code (not the file it came from)', async (t) => {
  const changed = { ...loadProfile('pi'), replicas: 2, model: { base: { type: 'fixed' as const, ms: 1 } } }
  const target = await spawnTarget({ profile: changed, seed: 3 })
  const agent = newAgent()
  t.after(async () => {
    await target.close()
    await agent.close()
  })
  assert.equal(target.urls.length, 2)
  const r = await timedRequest(target.urls[1]!, agent)
  assert.equal(r.status, 200)
  assert.equal(r.serverMs, 1)
  assert.equal(target.seed, 3)
  await assert.rejects(spawnTarget({ profile: { ...changed, replicas: 0 } }), /replicas must be an integer/)
})
