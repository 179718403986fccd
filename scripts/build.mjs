#!/usr/bin/env node
/**
 * `npm run build`: a clean compile (dist/ removed first, so no output of a
 * deleted source survives), then a stamp holding when the compile started.
 *
 * `node scripts/build.mjs --if-stale` (what `npm test`, `npm run demo` and
 * `npm run bench` run first): compiles only when a source, the tsconfig or
 * the package files changed since the last compile started, so `npm ci &&
 * npm test` compiles once (in `prepare`), not twice. A deleted file changes
 * its directory's mtime, so it counts as a change too.
 *
 * `prepare` runs `--if-stale` too: npm runs `prepare` whenever the tree is
 * installed, and `npx hedgebench` installs it (a link) the first time it
 * runs in a clone; a clean compile there removed dist/ under a test suite
 * running from it (the launcher's npx test, on a fresh machine).
 */
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const STAMP = join(root, 'dist', '.build-started')
const INPUTS = ['src', 'test', 'bench', 'scripts', 'tsconfig.json', 'package.json', 'package-lock.json']

/** The latest mtime (ms) of a file, or of a directory and everything in it. */
function newest(path) {
  let stat
  try {
    stat = statSync(path)
  } catch {
    return 0
  }
  let latest = stat.mtimeMs
  if (stat.isDirectory()) for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)))
  return latest
}

function lastBuildStarted() {
  try {
    return Number(readFileSync(STAMP, 'utf8'))
  } catch {
    return -1
  }
}

if (process.argv.includes('--if-stale')) {
  const started = lastBuildStarted()
  if (started >= 0 && Math.max(...INPUTS.map((p) => newest(join(root, p)))) < started) {
    process.stderr.write('dist/ is up to date with the sources: not compiling again\n')
    process.exit(0)
  }
}

const startedAt = Date.now()
rmSync(join(root, 'dist'), { recursive: true, force: true })
// typescript's exports hide bin/tsc from require.resolve, not its package.json: bin/tsc beside that, found as
// Node finds a package (also from a directory without node_modules of its own, as Stryker's sandbox is when it builds).
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc')
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { stdio: 'inherit', cwd: root })
if (compiled.status !== 0) process.exit(compiled.status ?? 1)
mkdirSync(join(root, 'dist'), { recursive: true })
writeFileSync(STAMP, String(startedAt))
