/**
 * The `hedgebench ...` commands of the README and docs/*.md, as
 * test/docs-commands.test.ts runs them: where they are found, how a page
 * says what they exit with, and how each is bounded to run here (the rules
 * are listed in the test's header, which is where a reader looks).
 */
import { spawn } from 'node:child_process'
import { appendFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { YOUNG_GENERATION_FLAGS } from '../../src/cli/launcher.js'

export interface DocCommand {
  source: string
  /** 1-based line of the command's first line in the page. */
  line: number
  /** 1-based line where its block starts: a block's commands run one after another, in one directory. */
  block: number
  /** As the page writes it, continuation lines included, without a leading `$ ` or `npx `. */
  command: string
  /** The exit codes the page allows (annotation), [0] when it says nothing. */
  exits: number[]
  /** Why it is not run here (annotation), when it is not. */
  skip?: string
}

/** Code blocks of these languages are programs (test/docs-snippets.test.ts runs them), not shell. */
const PROGRAM_TAGS = new Set(['ts', 'typescript', 'js', 'javascript', 'json', 'yaml', 'proto', 'protobuf'])
const COMMAND = /^(?:\$ )?(?:npx )?(hedgebench(?: .*)?)$/
const ANNOTATION = /^<!-- docs-commands: (?:(\d+): )?(exit ([\d,]+)|skip: (.+?)) -->$/

interface Annotation {
  /** 1-based index of the command in its block it applies to; undefined: all of them. */
  index?: number
  exits?: number[]
  skip?: string
}

/**
 * Every command line of a page's code blocks: fenced blocks (any language
 * but a program's) and indented ones, a line starting with `hedgebench`
 * (after an optional `$ ` prompt or `npx `), with its `\` continuations.
 * Annotations are HTML comments on the lines just before a block (blank
 * lines between allowed), each `<!-- docs-commands: [N: ]exit 1[,2] -->` or
 * `<!-- docs-commands: [N: ]skip: why -->`, for the block's Nth command or all.
 */
export function extractCommands(source: string, text: string): DocCommand[] {
  const lines = text.split('\n')
  const out: DocCommand[] = []
  let i = 0
  while (i < lines.length) {
    const fence = /^(\s*)(```|~~~)\s*([\w-]*)/.exec(lines[i]!)
    const indented = /^ {4}\S/.test(lines[i]!) && (i === 0 || lines[i - 1]!.trim() === '')
    if (!fence && !indented) {
      i++
      continue
    }
    const annotations = annotationsBefore(lines, i, source)
    const block = i + 1
    const body: Array<[number, string]> = []
    if (fence) {
      const close = lines.findIndex((l, j) => j > i && l.trim() === fence[2])
      if (close === -1) throw new Error(`${source}:${i + 1}: a fenced block that never closes`)
      const indent = fence[1]!.length
      if (!PROGRAM_TAGS.has(fence[3]!.toLowerCase())) for (let j = i + 1; j < close; j++) body.push([j, lines[j]!.slice(indent)])
      i = close + 1
    } else {
      while (i < lines.length && (/^ {4}/.test(lines[i]!) || (lines[i]!.trim() === '' && /^ {4}/.test(lines[i + 1] ?? '')))) {
        body.push([i, lines[i]!.slice(4)])
        i++
      }
    }
    out.push(...blockCommands(source, block, body, annotations))
  }
  return out
}

function blockCommands(source: string, block: number, body: Array<[number, string]>, annotations: Annotation[]): DocCommand[] {
  const out: DocCommand[] = []
  for (let k = 0; k < body.length; k++) {
    const [at, first] = body[k]!
    const m = COMMAND.exec(first)
    if (!m) continue
    let command = m[1]!
    while (/\\\s*$/.test(command) && k + 1 < body.length) command += `\n${body[++k]![1]}`
    const index = out.length + 1
    const own = annotations.filter((a) => a.index === undefined || a.index === index)
    const exits = own.find((a) => a.exits)?.exits ?? [0]
    const skip = own.find((a) => a.skip)?.skip
    out.push({ source, line: at + 1, block, command, exits, ...(skip ? { skip } : {}) })
  }
  const stray = annotations.find((a) => a.index !== undefined && a.index > out.length)
  if (stray) throw new Error(`${source}:${body[0]?.[0] ?? 0}: an annotation for command ${stray.index} of a block of ${out.length}`)
  return out
}

function annotationsBefore(lines: string[], start: number, source: string): Annotation[] {
  const out: Annotation[] = []
  for (let j = start - 1; j >= 0; j--) {
    const line = lines[j]!.trim()
    if (line === '') continue
    if (!line.startsWith('<!-- docs-commands:')) break
    const m = ANNOTATION.exec(line)
    if (!m) throw new Error(`${source}:${j + 1}: an annotation not understood: ${line}`)
    out.push({
      ...(m[1] ? { index: Number(m[1]) } : {}),
      ...(m[3] ? { exits: m[3].split(',').map(Number) } : {}),
      ...(m[4] ? { skip: m[4] } : {}),
    })
  }
  return out
}

/** The test's bounds on a command: what a page's -n, -z, -q and warm-up become here. */
export const BOUNDS = { requests: 40, duration: '1s', rate: 400, warmup: 20 } as const

export interface Replicas {
  http: string[]
  grpc: string[]
}

/**
 * The line as the shell is given it: placeholders a page writes in place of
 * a URL or a file name filled in, and a trailing `&` dropped (the shim stops
 * what would serve forever; in the background its exit would be lost).
 */
export function fillPlaceholders(command: string, replicas: Replicas): string {
  return command
    .replace(/grpc:\/\/…/g, replicas.grpc.join(' '))
    .replace(/\bURL([1-9])\b/g, (_, n: string) => replicas.http[(Number(n) - 1) % replicas.http.length]!.replace(/\/$/, ''))
    .replace(/…/g, '*')
    .replace(/\s&(\s+#.*)?$/, (_, comment?: string) => comment ?? '')
}

const LOAD_COMMANDS = new Set(['run', 'sweep'])
const SUBCOMMANDS = new Set(['run', 'sweep', 'watch', 'serve', 'demo', 'report', 'compare', 'merge'])

/**
 * A command's arguments, after the shell, as run here: every http:// and
 * grpc:// URL's origin becomes one of the test's replicas (the first origin
 * named the first replica, and so on; path and query kept), a run's or a
 * sweep's -n, -z, -q and --warmup are bounded (BOUNDS; -n and --warmup added
 * when not given), a watch's -z (added: it would run until Ctrl-C), -q and
 * --warmup, demo's -n too, serve's --port becomes 0 and --metrics-port
 * 127.0.0.1:0 (free ports).
 */
export function boundArgs(args: readonly string[], replicas: Replicas): string[] {
  const sub = SUBCOMMANDS.has(args[0] ?? '') ? args[0]! : 'run'
  const origins = new Map<string, string>()
  const out = args.map((arg) => replaceOrigin(arg, replicas, origins))
  if (out.includes('--help') || out.includes('-h') || out.includes('--version')) return out
  const bound = (flags: string[], value: (given: string) => string): boolean => {
    let found = false
    for (let i = 0; i < out.length; i++) {
      const eq = flags.map((f) => `${f}=`).find((f) => out[i]!.startsWith(f))
      if (eq) {
        out[i] = `${eq}${value(out[i]!.slice(eq.length))}`
        found = true
      } else if (flags.includes(out[i]!) && i + 1 < out.length) {
        out[i + 1] = value(out[i + 1]!)
        found = true
      }
    }
    return found
  }
  const atMost = (cap: number) => (given: string) => (Number(given) > cap ? String(cap) : given)
  if (sub === 'serve') bound(['--port'], () => '0')
  if (sub === 'demo' && !bound(['-n', '--requests'], atMost(BOUNDS.requests))) out.push('-n', String(BOUNDS.requests))
  bound(['--metrics-port'], () => '127.0.0.1:0')
  if (sub === 'watch') {
    // Until Ctrl-C unless -z: here always -z, and no -n (a watch is timed only).
    // Marks fall on whole seconds inside -z: a watch with one gets 2 s, its marks at 1 s (their names kept).
    const marked = bound(['--mark-at'], (given) => `1s${given.includes('=') ? given.slice(given.indexOf('=')) : ''}`)
    const duration = marked ? '2s' : BOUNDS.duration
    if (!bound(['-z', '--duration'], () => duration)) out.push('-z', duration)
    bound(['-q', '--rate'], atMost(BOUNDS.rate))
    if (!bound(['--warmup'], atMost(BOUNDS.warmup))) out.push('--warmup', String(BOUNDS.warmup))
    return out
  }
  if (!LOAD_COMMANDS.has(sub)) return out
  const timed = bound(['-z', '--duration'], () => BOUNDS.duration)
  if (!bound(['-n', '--requests'], atMost(BOUNDS.requests)) && !timed) out.push('-n', String(BOUNDS.requests))
  bound(['-q', '--rate'], atMost(BOUNDS.rate))
  if (!bound(['--warmup'], atMost(BOUNDS.warmup))) out.push('--warmup', String(BOUNDS.warmup))
  return out
}

function replaceOrigin(arg: string, replicas: Replicas, origins: Map<string, string>): string {
  const m = /^(https?|grpcs?):\/\/([^/?#\s]+)(.*)$/.exec(arg)
  if (!m || (m[1] !== 'http' && m[1] !== 'grpc')) return arg
  const pool = m[1] === 'grpc' ? replicas.grpc : replicas.http
  const key = `${m[1]}://${m[2]}`
  if (!origins.has(key)) origins.set(key, pool[[...origins.keys()].filter((k) => k.startsWith(`${m[1]}:`)).length % pool.length]!)
  return `${origins.get(key)!.replace(/\/$/, '')}${m[3]}`
}

const BIN = fileURLToPath(new URL('../../../bin/hedgebench.js', import.meta.url))

/**
 * The `hedgebench` on the commands' PATH: runs the real CLI with the bounded
 * arguments and appends its exit code to DOCS_COMMANDS_LOG. `serve` serves
 * until Ctrl-C: it is sent SIGINT once it says it is ready, so what is
 * checked is that it starts and stops as the page says.
 */
export async function shim(args: string[]): Promise<void> {
  const replicas = JSON.parse(process.env.DOCS_COMMANDS_REPLICAS!) as Replicas
  const bounded = boundArgs(args, replicas)
  const serve = bounded[0] === 'serve'
  let sent = 0
  // With the launcher's flags given, the CLI runs in this child rather than starting a second one (one Node start-up less per command).
  const child = spawn(process.execPath, [...YOUNG_GENERATION_FLAGS, BIN, ...bounded], { stdio: ['ignore', 'inherit', serve ? 'pipe' : 'inherit'] })
  if (serve) {
    child.stderr!.setEncoding('utf8').on('data', (s: string) => {
      process.stderr.write(s)
      if (s.includes('ready (Ctrl-C stops)')) {
        sent++
        child.kill('SIGINT')
      }
    })
  }
  const [code, signal] = await new Promise<[number, string | null]>((resolve) => child.on('exit', (c, sig) => resolve([c ?? 128, sig])))
  appendFileSync(process.env.DOCS_COMMANDS_LOG!, `${JSON.stringify({ args: bounded, code, signal, sent })}\n`)
  process.exitCode = code
}
