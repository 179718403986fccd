/**
 * The layout ARCHITECTURE.md describes, checked on the sources: every
 * import in src/ points from an outer layer to the same or an inner one, and
 * no module imports itself through others. A change that breaks the
 * direction fails here, not in a reader's head.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { posix } from 'node:path'
import { fileURLToPath } from 'node:url'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

/** Inner to outer, as in ARCHITECTURE.md. */
const LAYERS = ['core', 'wire', 'results', 'hedging', 'stats', 'protocol', 'engine', 'run', 'sim', 'report', 'cli'] as const

function sourceFiles(): string[] {
  const out: string[] = []
  const walk = (dir: string): void => {
    for (const entry of readdirSync(posix.join(SRC, dir), { withFileTypes: true })) {
      const rel = dir === '' ? entry.name : `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(rel)
      else if (rel.endsWith('.ts')) out.push(rel)
    }
  }
  walk('')
  return out
}

/** The src-relative files `file` imports (static and dynamic, type imports too). */
function importsOf(file: string): string[] {
  const text = readFileSync(posix.join(SRC, file), 'utf8')
  const out: string[] = []
  for (const m of text.matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)\.js'/g)) {
    out.push(posix.normalize(posix.join(posix.dirname(file), `${m[1]}.ts`)))
  }
  return out
}

const layerOf = (file: string): string => file.split('/')[0]!

test('every source file but index.ts lives in a layer folder', () => {
  const loose = sourceFiles().filter((f) => !f.includes('/') && f !== 'index.ts')
  assert.deepEqual(loose, [])
  const unknown = sourceFiles().filter((f) => f.includes('/') && !(LAYERS as readonly string[]).includes(layerOf(f)))
  assert.deepEqual(unknown, [], 'a new folder must be placed in LAYERS and in ARCHITECTURE.md')
})

test("ARCHITECTURE.md names every source file, in its layer's row", () => {
  const doc = readFileSync(fileURLToPath(new URL('../../ARCHITECTURE.md', import.meta.url)), 'utf8')
  const rowOf = (layer: string): string => doc.split('\n').find((line) => line.startsWith(`| \`${layer}/\``)) ?? ''
  const unnamed = sourceFiles().filter((f) => f.includes('/') && !rowOf(layerOf(f)).includes(`\`${posix.basename(f)}\``))
  assert.deepEqual(unnamed, [], 'say in ARCHITECTURE.md what each new file is')
})

test('imports point inward: no layer uses a layer outside it', () => {
  const rank = (f: string): number => (LAYERS as readonly string[]).indexOf(layerOf(f))
  const upward: string[] = []
  for (const file of sourceFiles()) {
    if (file === 'index.ts') continue
    for (const target of importsOf(file)) {
      if (target === 'index.ts' || rank(target) > rank(file)) upward.push(`${file} -> ${target}`)
    }
  }
  assert.deepEqual(upward, [])
})

/**
 * Siblings that must not use each other although the layer order would let
 * them: the simulated target is the client's sibling, not its user (they
 * share only wire/, the contract both sides speak), and the reports read
 * results, never the run that made them.
 */
const NEVER: Record<string, readonly string[]> = {
  sim: ['run', 'engine', 'hedging', 'stats'],
  report: ['run', 'engine'],
}

test('siblings stay apart: sim never imports run, engine, hedging or stats; report never imports run or engine', () => {
  const crossing: string[] = []
  for (const file of sourceFiles()) {
    const banned = NEVER[layerOf(file)] ?? []
    for (const target of importsOf(file)) if (banned.includes(layerOf(target))) crossing.push(`${file} -> ${target}`)
  }
  assert.deepEqual(crossing, [])
})

test('no import cycle between modules', () => {
  const graph = new Map(sourceFiles().map((f) => [f, importsOf(f)]))
  const state = new Map<string, 'open' | 'done'>()
  const cycles: string[] = []
  const visit = (file: string, path: string[]): void => {
    if (state.get(file) === 'done') return
    if (state.get(file) === 'open') {
      cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '))
      return
    }
    state.set(file, 'open')
    for (const next of graph.get(file) ?? []) visit(next, [...path, file])
    state.set(file, 'done')
  }
  for (const file of graph.keys()) visit(file, [])
  assert.deepEqual(cycles, [])
})
