import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { lstat, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { UsageError } from '../src/core/errors.js'
import { assertWritableDir, loadResult, resultFileStem, saveResult, sanitizeLabel, writeFileAtomic, writeOutputFile } from '../src/report/results-store.js'
import { assertCsvSummaryOf } from './helpers/csv.js'
import { makeHedgedRun, makeRunResult } from './helpers/result-fixture.js'

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hedgebench-store-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return dir
}

function assertUsage(pattern: RegExp) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof UsageError, `expected UsageError, got ${String(err)}`)
    assert.ok(!err.message.includes('\n'))
    assert.match(err.message, pattern)
    return true
  }
}

test('file stem: UTC timestamp without colons, then the sanitized label', () => {
  assert.equal(resultFileStem(makeRunResult({ startedAt: '2026-11-30T10:00:00.123Z', label: 'before' })), '2026-11-30T10-00-00Z-before')
  assert.equal(resultFileStem(makeRunResult({ startedAt: '2026-11-30T11:00:00+01:00', label: 'x' })), '2026-11-30T10-00-00Z-x')
  assert.equal(sanitizeLabel('my run/../../etc'), 'my-run-..-..-etc')
  assert.equal(sanitizeLabel('../'), 'run')
  assert.equal(sanitizeLabel(''), 'run')
  assert.equal(sanitizeLabel('café: v2'), 'cafe-v2')
})

test('saveResult writes JSON and CSV summary, and they load back', async (t) => {
  const dir = await tempDir(t)
  const result = makeHedgedRun()
  const files = await saveResult(result, dir)
  assert.equal(files.json, join(dir, '2026-11-30T10-00-00Z-hedged-fixture.json'))
  assert.equal(files.csv, join(dir, '2026-11-30T10-00-00Z-hedged-fixture.csv'))
  // Checked against the run object, not against the renderers (a broken one would match itself).
  assert.deepEqual(JSON.parse(await readFile(files.json, 'utf8')), result)
  assertCsvSummaryOf(await readFile(files.csv, 'utf8'), result)
  assert.deepStrictEqual(await loadResult(files.json), result)
})

test('saving the same result twice never overwrites, and leaves no temp files', async (t) => {
  const dir = await tempDir(t)
  const result = makeRunResult()
  const first = await saveResult(result, dir)
  const second = await saveResult(result, dir)
  const third = await saveResult(result, dir)
  assert.equal(second.json, join(dir, '2026-11-30T10-00-00Z-fixture-2.json'))
  assert.equal(third.csv, join(dir, '2026-11-30T10-00-00Z-fixture-3.csv'))
  assert.deepEqual(
    (await readdir(dir)).sort(),
    [first, second, third]
      .flatMap((f) => [f.csv, f.json])
      .map((p) => p.slice(dir.length + 1))
      .sort(),
  )
})

test('a taken CSV name moves the pair to the next suffix without touching the existing file', async (t) => {
  const dir = await tempDir(t)
  await writeFile(join(dir, '2026-11-30T10-00-00Z-fixture.csv'), 'mine')
  const files = await saveResult(makeRunResult(), dir)
  assert.equal(files.json, join(dir, '2026-11-30T10-00-00Z-fixture-2.json'))
  assert.equal(await readFile(join(dir, '2026-11-30T10-00-00Z-fixture.csv'), 'utf8'), 'mine')
  assert.deepEqual((await readdir(dir)).sort(), [
    '2026-11-30T10-00-00Z-fixture-2.csv',
    '2026-11-30T10-00-00Z-fixture-2.json',
    '2026-11-30T10-00-00Z-fixture.csv',
  ])
})

test('saves racing for the same name all get their own file', async (t) => {
  const dir = await tempDir(t)
  const saved = await Promise.all(Array.from({ length: 8 }, () => saveResult(makeRunResult(), dir)))
  assert.equal(new Set(saved.map((f) => f.json)).size, 8)
  assert.equal((await readdir(dir)).length, 16)
})

test('writeFileAtomic: overwrite:false refuses an existing file; overwrite:true replaces it', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'out.html')
  await writeFileAtomic(path, 'one', { overwrite: false })
  await assert.rejects(writeFileAtomic(path, 'two', { overwrite: false }), { code: 'EEXIST' })
  assert.equal(await readFile(path, 'utf8'), 'one')
  await writeFileAtomic(path, 'three', { overwrite: true })
  assert.equal(await readFile(path, 'utf8'), 'three')
  assert.deepEqual(await readdir(dir), ['out.html'])
})

test('a writer killed mid-write leaves no partial file at the final name', async (t) => {
  const dir = await tempDir(t)
  const target = join(dir, 'big.json')
  const size = 128 * 1024 * 1024
  const store = new URL('../src/report/results-store.js', import.meta.url).href
  const script = `import { writeFileAtomic } from ${JSON.stringify(store)}
    await writeFileAtomic(${JSON.stringify(target)}, Buffer.alloc(${size}, 120), { overwrite: false })`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  // Kill it as soon as its temp file exists, i.e. while the data is being written.
  while ((await readdir(dir)).length === 0 && child.exitCode === null) await sleep(1)
  child.kill('SIGKILL')
  await exited
  const final = await stat(target).catch(() => null)
  // Either the write never got its name, or (if it won the race) the file is complete.
  assert.ok(final === null || final.size === size, `partial file at the final name: ${final?.size} bytes`)
  // What a crash may leave is a hidden temp file, recognisable by its prefix.
  const left = await readdir(dir)
  assert.ok(
    left.every((name) => name === 'big.json' || name.startsWith('.hedgebench-tmp-')),
    left.join(', '),
  )
})

test('an unwritable output directory is a one-line UsageError and leaves nothing behind', async (t) => {
  const dir = await tempDir(t)
  const file = join(dir, 'a-file')
  await writeFile(file, 'x')
  await assert.rejects(
    assertWritableDir(join(file, 'sub')),
    assertUsage(/^cannot write to output directory ".*a-file\/sub": a component of the path is not a directory \(ENOTDIR\)$/),
  )
  await assert.rejects(assertWritableDir(file), assertUsage(/^cannot write to output directory ".*a-file": exists and is not a directory \(EEXIST\)$/))
  await assert.rejects(saveResult(makeRunResult(), join(file, 'sub')), /cannot save result/)
  assert.deepEqual(await readdir(dir), ['a-file'])
})

test('assertWritableDir creates a missing directory and leaves it empty', async (t) => {
  const dir = join(await tempDir(t), 'results', 'nested')
  await assertWritableDir(dir)
  assert.deepEqual(await readdir(dir), [])
})

test('loadResult: missing file, non-JSON and wrong schema are one-line UsageErrors naming the file', async (t) => {
  const dir = await tempDir(t)
  await assert.rejects(loadResult(join(dir, 'nope.json')), assertUsage(/nope\.json: no such file or directory \(ENOENT\)$/))
  await writeFile(join(dir, 'x.json'), 'not json at all')
  await assert.rejects(loadResult(join(dir, 'x.json')), assertUsage(/x\.json: not JSON \(.+\)$/))
  await writeFile(join(dir, 'y.json'), '{"schema":"vegeta"}')
  await assert.rejects(loadResult(join(dir, 'y.json')), assertUsage(/y\.json: not a hedgebench result \(schema "vegeta"/))
  await assert.rejects(loadResult(dir), assertUsage(/is a directory \(EISDIR\)$/))
})

test('--html or merge --out naming a device or a FIFO writes into it, never renames a file over it; a full disk is not bad input', {
  skip: process.platform !== 'linux' ? 'needs Linux (/dev/null, /dev/full, mkfifo)' : false,
}, async (t) => {
  const dir = await tempDir(t)
  // A rename over /dev/stdout (a link to a device) would replace it with a file: as root, for every process on the machine.
  const link = join(dir, 'to-null')
  await symlink('/dev/null', link)
  await writeOutputFile(link, '<html></html>', '--html')
  assert.ok((await lstat(link)).isSymbolicLink(), 'the link to a device is still a link')
  assert.deepEqual(await readdir(dir), ['to-null'], 'no temporary file left')
  const fifo = join(dir, 'fifo')
  if (spawnSync('mkfifo', [fifo]).status === 0) {
    const reader = new Promise<string>((resolve, reject) => {
      const cat = spawn('cat', [fifo])
      let out = ''
      cat.stdout.setEncoding('utf8').on('data', (s: string) => (out += s))
      cat.on('error', reject)
      cat.on('close', () => resolve(out))
    })
    await writeOutputFile(fifo, 'through the pipe', '--html')
    assert.equal(await reader, 'through the pipe', 'a reader of the named pipe gets the report')
    assert.ok((await stat(fifo)).isFIFO())
  }
  // Only once a device is known to be written in place: a full disk is the machine's failure (exit 1), not bad input (2).
  await assert.rejects(writeOutputFile('/dev/full', 'x'.repeat(100_000), '--html'), (err: unknown) => {
    assert.ok(!(err instanceof UsageError), String(err))
    assert.equal((err as Error).message, '--html "/dev/full": cannot write: no space left on device (ENOSPC)')
    return true
  })
  assert.ok((await stat('/dev/full')).isCharacterDevice())
})
