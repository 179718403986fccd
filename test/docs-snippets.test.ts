/**
 * Every TypeScript or JavaScript block in the README and docs/library.md
 * runs as written (issue 33: the library snippet used an undeclared
 * `observer`). Each block is written as a module of its own inside the
 * package (so `import ... from 'hedgebench'` resolves to the built package
 * through its own `exports`, as a user's import does), type-checked with
 * the project's tsc in strict mode, then run: the snippets start the
 * built-in simulated target on 127.0.0.1, never a remote host.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const exec = promisify(execFile)
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SOURCES = ['README.md', 'docs/library.md']
const TAGS = new Set(['ts', 'typescript', 'js', 'javascript'])

interface Snippet {
  source: string
  line: number
  code: string
}

/** The fenced blocks tagged as TypeScript or JavaScript, with where each starts. */
export function extractSnippets(source: string, text: string): Snippet[] {
  const out: Snippet[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w+)\s*$/.exec(lines[i]!)
    if (!open) continue
    const end = lines.indexOf('```', i + 1)
    assert.ok(end > i, `${source}:${i + 1}: a fenced block that never closes`)
    if (TAGS.has(open[1]!.toLowerCase())) out.push({ source, line: i + 1, code: lines.slice(i + 1, end).join('\n') })
    i = end
  }
  return out
}

test('the snippet extractor finds tagged blocks only', () => {
  const text = ['intro', '```ts', 'const a = 1', '```', '```sh', 'npm test', '```', '```js', 'let b = 2', '```'].join('\n')
  assert.deepEqual(
    extractSnippets('x.md', text).map((s) => [s.line, s.code]),
    [
      [2, 'const a = 1'],
      [8, 'let b = 2'],
    ],
  )
})

test('every TypeScript/JavaScript snippet of the README and docs/library.md type-checks and runs', async (t) => {
  const snippets: Snippet[] = []
  for (const source of SOURCES) snippets.push(...extractSnippets(source, await readFile(join(ROOT, source), 'utf8')))
  // The library page has two (a run, the interceptor with an observer): finding none would prove nothing.
  assert.ok(snippets.filter((s) => s.source === 'docs/library.md').length >= 2, 'docs/library.md has its snippets')
  const dir = await mkdtemp(join(ROOT, 'dist', 'snippets-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const files = snippets.map((_, i) => `snippet-${i}.ts`)
  await Promise.all(snippets.map((s, i) => writeFile(join(dir, files[i]!), `// ${s.source}:${s.line}\n${s.code}\nexport {}\n`)))
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023'],
        types: ['node'],
        strict: true,
        skipLibCheck: true,
        outDir: 'out',
        rootDir: '.',
      },
      files,
    }),
  )
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  const compiled = await exec(process.execPath, [tsc, '-p', dir], { cwd: dir, timeout: 120_000 }).then(
    () => '',
    (err: { stdout?: string; message: string }) => err.stdout || err.message,
  )
  const where = (out: string) =>
    out.replace(/snippet-(\d+)\.ts\((\d+)/g, (_, i: string, l: string) => `${snippets[Number(i)]!.source}:${snippets[Number(i)]!.line + Number(l) - 1}`)
  assert.equal(where(compiled), '', 'the snippets type-check (the positions are the markdown lines)')
  for (const [i, s] of snippets.entries()) {
    const r = await exec(process.execPath, [join(dir, 'out', files[i]!.replace(/\.ts$/, '.js'))], { cwd: dir, timeout: 60_000 }).then(
      (ok) => ({ code: 0, stderr: ok.stderr }),
      (err: { code?: number; stderr?: string }) => ({ code: err.code ?? 1, stderr: err.stderr ?? '' }),
    )
    assert.equal(r.code, 0, `${s.source}:${s.line} runs: ${r.stderr}`)
  }
})

test("docs/library.md's table of observer callbacks names every HedgeObserver callback, with its parameters, and no other", async () => {
  const source = await readFile(join(ROOT, 'src/hedging/observer.ts'), 'utf8')
  const body = /export interface HedgeObserver \{([\s\S]*?)\n\}/.exec(source)![1]!
  // `name?(a: T, b: U): void` -> `name(a, b)`, as the table writes them.
  const declared = [...body.matchAll(/^ {2}(\w+)\??\(([^)]*)\): void$/gm)].map(
    (m) =>
      `${m[1]}(${m[2]!
        .split(',')
        .map((p) => p.split(':')[0]!.trim())
        .filter(Boolean)
        .join(', ')})`,
  )
  // The interface has 14 callbacks: a regex that matched a few would prove nothing.
  assert.ok(declared.length >= 14, `parsed ${declared.length} callbacks from observer.ts: ${declared.join(' ')}`)
  const page = await readFile(join(ROOT, 'docs/library.md'), 'utf8')
  const section = page.slice(page.indexOf("## The observer's callbacks"))
  const documented = [...section.matchAll(/^\| `(\w+\([^)]*\))` \|/gm)].map((m) => m[1]!)
  assert.deepEqual([...documented].sort(), [...declared].sort())
})

test('the README stays a first contact (at most ~250 lines) whose table links every docs page, and every page starts from a command', async () => {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8')
  assert.ok(readme.split('\n').length <= 250, `README.md has ${readme.split('\n').length} lines`)
  const pages = (await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).sort()
  assert.ok(pages.length >= 8, pages.join(' '))
  const toc = readme.slice(readme.indexOf('## Documentation'), readme.indexOf('\n## ', readme.indexOf('## Documentation') + 1))
  assert.deepEqual(
    pages.filter((p) => !toc.includes(`](docs/${p})`)),
    [],
    "docs pages missing from the README's Documentation table",
  )
  for (const page of pages.filter((p) => p !== 'flags.md')) {
    // After the title, the first thing on the page is a fenced command (flags.md is generated: a command per section),
    // after the annotations that say how it exits (docs-commands.test.ts).
    const first = (await readFile(join(ROOT, 'docs', page), 'utf8'))
      .split('\n')
      .slice(1)
      .find((l) => l.trim() !== '' && !l.startsWith('<!-- docs-commands:'))
    assert.match(first ?? '', /^```(sh|ts)$/, `docs/${page} starts from a command`)
  }
})
