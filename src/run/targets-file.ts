/**
 * `--targets FILE`: a mix of requests, in vegeta's HTTP format or as JSON
 * lines, read and checked whole before anything is sent. A fault is one
 * UsageError naming the file and line ("targets.txt:7: ...").
 *
 * HTTP format (vegeta's): `METHOD path-or-URL`, then header lines
 * `Name: value`, then an optional `@body-file`; a blank line between
 * targets, `#` comments. JSON lines: one object a line,
 * `{"method", "path", "headers", "body" | "bodyFile", "weight", "hedgeDelay"}`.
 * A body file is read relative to the targets file. A full URL must be on
 * one of the replicas: its path is then joined onto each replica like a
 * bare path (the host only says which service it is).
 */
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { UsageError } from '../core/errors.js'
import { parseHeader } from '../core/header-parse.js'
import { check, exact, num, str, v, record } from '../core/schema.js'
import { TARGET_METHODS, TargetSpecSchema, type TargetSpec } from './target-spec.js'

/** Where a line came from, for its error. */
interface Where {
  file: string
  line: number
}

const fault = (at: Where, message: string): UsageError => new UsageError(`${at.file}:${at.line}: ${message}`)

/** The targets in `file`, every one checked, paths relative to the replicas (`urls`). */
export function readTargetsFile(file: string, urls: readonly string[]): TargetSpec[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read --targets ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  const lines = text.split(/\r?\n/)
  const first = lines.find((l) => l.trim() !== '' && !l.trim().startsWith('#'))
  if (first === undefined) throw new UsageError(`--targets ${file} holds no target`)
  // A URL that does not parse is refused by name later (resolve-options.ts): here it names no replica.
  const replicas = urls.flatMap((u) => (URL.canParse(u) ? [new URL(u)] : []))
  return first.trim().startsWith('{') ? readJsonLines(file, lines, replicas) : readHttpFormat(file, lines, replicas)
}

/** A target line's path: a bare path as it is; a full URL's path after the replica it names (refused when it names none). */
function relativePath(target: string, replicas: readonly URL[], at: Where): string {
  if (target.startsWith('/')) return target
  let url: URL
  try {
    url = new URL(target)
  } catch {
    throw fault(at, `"${target}" is neither a path starting with "/" nor a URL`)
  }
  const replica = replicas.find((r) => r.host === url.host && r.protocol === url.protocol)
  if (!replica) throw fault(at, `${url.origin} is not one of the replicas (${replicas.map((r) => r.origin).join(', ')}): give a path, or a URL on a replica`)
  const base = replica.pathname.replace(/\/$/, '')
  const path = url.pathname.startsWith(`${base}/`) ? url.pathname.slice(base.length) : url.pathname
  return path + url.search
}

function knownMethod(method: string, at: Where): string {
  if (!(TARGET_METHODS as readonly string[]).includes(method)) throw fault(at, `unknown method "${method.slice(0, 20)}" (one of ${TARGET_METHODS.join(', ')})`)
  return method
}

function readBody(file: string, name: string, at: Where): Buffer {
  const path = resolve(dirname(file), name)
  try {
    return readFileSync(path)
  } catch (err) {
    throw fault(at, `body file ${name} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`)
  }
}

/** A target as read, checked by the one schema (a fault in it named with its line). */
function checked(spec: Record<string, unknown>, at: Where): TargetSpec {
  const result = check(TargetSpecSchema, spec)
  if ('problem' in result) throw fault(at, result.problem)
  return result.value
}

function readHttpFormat(file: string, lines: readonly string[], replicas: readonly URL[]): TargetSpec[] {
  const targets: TargetSpec[] = []
  let current: { spec: Record<string, unknown>; headers: Array<[string, string]>; at: Where; body: boolean } | null = null
  const close = (): void => {
    if (current) targets.push(checked({ ...current.spec, ...(current.headers.length > 0 ? { headers: current.headers } : {}) }, current.at))
    current = null
  }
  for (const [i, raw] of lines.entries()) {
    const at = { file, line: i + 1 }
    const line = raw.trim()
    if (line.startsWith('#')) continue
    if (line === '') {
      close()
      continue
    }
    if (current === null) {
      const words = line.split(/\s+/)
      if (words.length !== 2) throw fault(at, `expected "METHOD path-or-URL", got "${line.slice(0, 60)}"`)
      const method = knownMethod(words[0]!, at)
      current = { spec: { method, path: relativePath(words[1]!, replicas, at) }, headers: [], at, body: false }
    } else if (line.startsWith('@')) {
      if (current.body) throw fault(at, 'a second @body line for one target')
      current.spec.body = readBody(file, line.slice(1).trim(), at)
      current.body = true
    } else {
      if (current.body) throw fault(at, 'a header after the @body line (headers come first, then @body, then a blank line)')
      try {
        current.headers.push(parseHeader(line))
      } catch (err) {
        throw fault(at, (err as Error).message)
      }
    }
  }
  close()
  return targets
}

/** One JSON line's fields; the headers an object of name: value (or values). */
const JsonLineSchema = exact({
  method: str(),
  path: str(),
  headers: v.optional(record(v.union([str(), v.array(str())], 'must be a string or an array of strings'))),
  body: v.optional(str()),
  bodyFile: v.optional(str()),
  weight: v.optional(num()),
  hedgeDelay: v.optional(v.union([num(), str()], 'must be a delay in ms or a percentile like "p90"')),
})

function readJsonLines(file: string, lines: readonly string[], replicas: readonly URL[]): TargetSpec[] {
  const targets: TargetSpec[] = []
  for (const [i, raw] of lines.entries()) {
    const at = { file, line: i + 1 }
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch (err) {
      throw fault(at, `not a JSON object (${(err as Error).message})`)
    }
    const shape = check(JsonLineSchema, parsed)
    if ('problem' in shape) throw fault(at, shape.problem)
    const { headers, body, bodyFile, path, method, ...rest } = shape.value
    if (body !== undefined && bodyFile !== undefined) throw fault(at, 'give "body" or "bodyFile", not both')
    knownMethod(method, at)
    const pairs = Object.entries(headers ?? {}).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((one): [string, string] => [name, one]))
    const content = bodyFile !== undefined ? readBody(file, bodyFile, at) : body !== undefined ? Buffer.from(body) : undefined
    targets.push(
      checked(
        { method, path: relativePath(path, replicas, at), ...rest, ...(pairs.length > 0 ? { headers: pairs } : {}), ...(content ? { body: content } : {}) },
        at,
      ),
    )
  }
  return targets
}
