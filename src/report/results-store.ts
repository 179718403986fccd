/**
 * Saved runs: `results/<UTC timestamp>-<label>.json` plus its `.csv`
 * summary. A finished measurement must never be lost or clobbered, so every
 * file is written to a temp file in the same directory, fsynced, and only
 * then given its name (link for "never overwrite", rename otherwise); a
 * crash leaves at worst a stray temp file, never a truncated JSON.
 */
import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { link, open, rename, unlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { UsageError } from '../core/errors.js'
import { makeDirs } from '../core/make-dirs.js'
import { isSpecialFile, TEMP_PREFIX, tempPathBeside } from '../core/temp-file.js'
import { renderCsvSummary } from './csv.js'
import { jsonObject, renderJson, resultFromValue } from '../results/result-json.js'
import { isSweepValue, type SavedSweepFile, sweepFromValue } from '../results/sweep-result.js'
import type { RunResult } from '../results/run-result.js'
import { isWatchValue, type SavedWatchFile, watchFromValue } from '../results/watch-file.js'
import { WATCH_LANES } from '../results/watch-result.js'
import { tryDecodeHistogram } from '../stats/histogram.js'
import { DEFAULT_MAX_RESULT_MB } from '../results/result-size.js'

export interface SavedFiles {
  json: string
  csv: string
}

/** `2026-11-30T10-00-00Z-<label>`: sortable, and legal on every filesystem (no colons). */
export function resultFileStem(result: RunResult): string {
  const started = new Date(result.startedAt)
  const iso = Number.isNaN(started.getTime()) ? new Date(0).toISOString() : started.toISOString()
  const stamp = `${iso.slice(0, 19).replaceAll(':', '-')}Z`
  return `${stamp}-${sanitizeLabel(result.label)}`
}

/** Letters, digits, `.`, `_`, `-` only; never empty, never a hidden or parent name. */
export function sanitizeLabel(label: string): string {
  const clean = label
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[.-]+|[.-]+$/g, '')
    .slice(0, 80)
  return clean === '' ? 'run' : clean
}

/**
 * Writes `data` to `path` atomically: temp file in the same directory,
 * fsync, then rename (overwrite) or hard link (fails with EEXIST instead of
 * replacing an existing file). The temp file is removed on every path.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, opts: { overwrite: boolean }): Promise<void> {
  const temp = tempPathBeside(path)
  try {
    await writeAndSync(temp, data)
    if (opts.overwrite) await rename(temp, path)
    else await linkNoReplace(temp, path)
    await syncDir(dirname(path))
  } finally {
    await unlink(temp).catch(() => undefined)
  }
}

/**
 * A file the user named (--html, merge --out): replaced atomically, or
 * written in place when it is a device or a FIFO (/dev/stdout, a named
 * pipe). A path that cannot take it is bad input, one line; a disk that is
 * full or failing is the machine's trouble (exit 1, as a failed save).
 */
export async function writeOutputFile(path: string, data: string, flag: string): Promise<void> {
  try {
    // A folder that is not there yet is made, as a run's --html and --out-dir make theirs.
    await makeDirs(dirname(path))
    if (await isSpecialFile(path)) await writeFile(path, data)
    else await writeFileAtomic(path, data, { overwrite: true })
  } catch (err) {
    const message = `${flag} "${path}": cannot write: ${reason(err)}`
    throw MACHINE_FAILURES.has((err as NodeJS.ErrnoException).code ?? '') ? new Error(message) : new UsageError(message)
  }
}

/** Write failures that say nothing about the path the user gave. */
const MACHINE_FAILURES = new Set(['ENOSPC', 'EDQUOT', 'EIO'])

async function writeAndSync(path: string, data: string | Uint8Array): Promise<void> {
  const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)
  try {
    await handle.writeFile(data)
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** link() never replaces its target; where hard links are unsupported, fall back to an exclusive-create check then rename. */
async function linkNoReplace(temp: string, path: string): Promise<void> {
  try {
    await link(temp, path)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err
    // Claim the name first (wx fails if it exists), then replace our own empty claim.
    await (await open(path, 'wx')).close()
    await rename(temp, path)
  }
}

/** Makes the rename itself durable; not every platform can fsync a directory, which is fine. */
async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch {
    // Best effort only.
  }
}

/**
 * Saves the run as `<stem>.json` and `<stem>.csv` in `outDir`, adding
 * `-2`, `-3`, ... to the stem when either name is taken; never overwrites.
 */
export async function saveResult(result: RunResult, outDir: string): Promise<SavedFiles> {
  const stem = resultFileStem(result)
  const json = renderJson(result)
  const csv = renderCsvSummary(result)
  await makeDirs(outDir).catch((err: unknown) => {
    throw saveError(outDir, err)
  })
  for (let n = 1; n < 10_000; n++) {
    const base = join(outDir, n === 1 ? stem : `${stem}-${n}`)
    const files = { json: `${base}.json`, csv: `${base}.csv` }
    if (await claimPair(files, json, csv)) return files
  }
  throw new Error(`cannot save result in "${outDir}": too many files named ${stem}-*`)
}

/** Both files or neither: if the CSV name is taken after the JSON was written, the JSON is withdrawn. */
async function claimPair(files: SavedFiles, json: string, csv: string): Promise<boolean> {
  try {
    await writeFileAtomic(files.json, json, { overwrite: false })
  } catch (err) {
    if (isExists(err)) return false
    throw saveError(files.json, err)
  }
  try {
    await writeFileAtomic(files.csv, csv, { overwrite: false })
    return true
  } catch (err) {
    await unlink(files.json).catch(() => undefined)
    if (isExists(err)) return false
    throw saveError(files.csv, err)
  }
}

const isExists = (err: unknown): boolean => (err as NodeJS.ErrnoException).code === 'EEXIST'

function saveError(path: string, err: unknown): Error {
  return new Error(`cannot save result to "${path}": ${reason(err)}`)
}

/**
 * Checked before a run starts, so a bad --out-dir fails in a second, not after the measurement.
 * Returns the first directory it had to create (undefined if the directory existed), so a caller
 * whose run then fails before measuring anything can take it back.
 */
export async function assertWritableDir(outDir: string): Promise<string | undefined> {
  try {
    const created = await makeDirs(outDir)
    const probe = join(outDir, `${TEMP_PREFIX}probe-${process.pid}-${randomBytes(4).toString('hex')}`)
    await writeAndSync(probe, '')
    await unlink(probe)
    return created
  } catch (err) {
    throw new UsageError(`cannot write to output directory "${outDir}": ${reason(err)}`)
  }
}

const MB = 1024 * 1024

/** Reads and validates a saved run of at most `maxMb` MB; every failure is one line naming the file. */
export async function loadResult(path: string, maxMb = DEFAULT_MAX_RESULT_MB): Promise<RunResult> {
  const saved = await loadSaved(path, maxMb)
  if (saved.kind === 'sweep') throw new UsageError(`${path}: a saved sweep, not a run`)
  if (saved.kind === 'watch') throw new UsageError(`${path}: a saved watch, not a run (hedgebench report renders it)`)
  return saved.result
}

/** A saved file as `report` and `compare` take it: a run, a sweep (results/sweep-result.ts) or a watch (results/watch-file.ts). */
export type SavedFile = { kind: 'run'; result: RunResult } | { kind: 'sweep'; saved: SavedSweepFile } | { kind: 'watch'; saved: SavedWatchFile }

/** Reads and validates a saved run, sweep or watch of at most `maxMb` MB; every failure is one line naming the file. */
export async function loadSaved(path: string, maxMb = DEFAULT_MAX_RESULT_MB): Promise<SavedFile> {
  let text: string
  try {
    text = await readBounded(path, maxMb)
  } catch (err) {
    throw err instanceof UsageError ? err : new UsageError(`${path}: ${reason(err)}`)
  }
  const value = jsonObject(text, path)
  if (isWatchValue(value)) return { kind: 'watch', saved: decodable(watchFromValue(value, text, path), path) }
  return isSweepValue(value) ? { kind: 'sweep', saved: sweepFromValue(value, path) } : { kind: 'run', result: resultFromValue(value, path) }
}

/** A watch's renderers read every segment's histogram: one that cannot be decoded is refused here, in one line, not met there as a stack trace. */
function decodable(saved: SavedWatchFile, path: string): SavedWatchFile {
  saved.watch.segments.forEach((segment, i) => {
    for (const lane of WATCH_LANES)
      if (tryDecodeHistogram(segment.lanes[lane].histogram) === null)
        throw new UsageError(`${path}: invalid watch: segments[${i}].lanes.${lane}.histogram is not a histogram`)
  })
  return saved
}

/** The file as text, refused by its size (fstat) when over `maxMb`; a pipe or device, which has no size, is read up to the limit. */
async function readBounded(path: string, maxMb: number): Promise<string> {
  const limit = Math.floor(maxMb * MB)
  const tooLarge = (size: string): UsageError =>
    new UsageError(`${path}: ${size}, over the limit of ${maxMb} MB for a result file (--max-result-size MB raises it)`)
  const handle = await open(path, 'r')
  try {
    const stat = await handle.stat()
    if (stat.isFile() && stat.size > limit) throw tooLarge(`${stat.size} bytes`)
    const chunks: Buffer[] = []
    let total = 0
    for (;;) {
      const { bytesRead, buffer } = await handle.read(Buffer.allocUnsafe(Math.min(MB, limit + 1 - total)), 0, Math.min(MB, limit + 1 - total))
      if (bytesRead === 0) break
      chunks.push(buffer.subarray(0, bytesRead))
      total += bytesRead
      if (total > limit) throw tooLarge(`more than ${limit} bytes`)
    }
    return Buffer.concat(chunks, total).toString('utf8')
  } finally {
    await handle.close()
  }
}

const REASONS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a component of the path is not a directory',
  EEXIST: 'exists and is not a directory',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
}

/** A short, single-line reason for a filesystem error. */
function reason(err: unknown): string {
  const e = err as NodeJS.ErrnoException
  if (e.code !== undefined && REASONS[e.code] !== undefined) return `${REASONS[e.code]} (${e.code})`
  return String(e?.message ?? err).split('\n')[0]!
}
