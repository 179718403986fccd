/**
 * `--targets FILE`: a mix of requests, in vegeta's HTTP format or as JSON
 * lines, read and checked whole before anything is sent. A fault is one
 * UsageError naming the file and line ("targets.txt:7: ...").
 *
 * HTTP format (vegeta's): `METHOD path-or-URL`, then header lines
 * `Name: value`, then an optional `@body-file`; a blank line between
 * targets, `#` comments. A gRPC target (grpc:// replicas) is `CALL
 * package.Service/Method`, then metadata lines, then an optional
 * `@message.json` or the message as one JSON line. Within a target, the
 * directive lines `# weight: 3` and `# hedge-delay: p90` give what JSON
 * lines give as fields (other `#` lines stay comments). JSON lines: one
 * object a line, `{"method", "path", "headers", "body" | "bodyFile",
 * "weight", "hedgeDelay"}`, or for gRPC `{"call", "data" | "dataFile",
 * "metadata", "weight", "hedgeDelay"}`. A body or data file is read
 * relative to the targets file. A full URL must be on one of the replicas:
 * its path is then joined onto each replica like a bare path (the host only
 * says which service it is). Whether a CALL is in the schema is checked
 * when the schema is loaded (run/grpc-target.ts), naming the line kept in
 * the target's `at`, and so are a message's template actions (rendered per
 * call, as -d's). An HTTP body is sent as given, a `{{` in it too (vegeta's).
 */
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { UsageError } from '../core/errors.js'
import { parseHeader } from '../core/header-parse.js'
import { check, exact, num, str, v, record } from '../core/schema.js'
import { parseHedgeDelayFlag } from '../core/delay-spec.js'
import { parseKeepingIntegers } from '../protocol/grpc-message.js'
import { isTemplate } from '../protocol/grpc-template.js'
import { GRPC_TARGET_METHOD, TARGET_METHODS, TargetSpecSchema, type TargetSpec } from './target-spec.js'

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
  if (!(TARGET_METHODS as readonly string[]).includes(method) && method !== GRPC_TARGET_METHOD)
    throw fault(at, `unknown method "${method.slice(0, 20)}" (one of ${TARGET_METHODS.join(', ')}; ${GRPC_TARGET_METHOD} for a gRPC method)`)
  return method
}

function readBody(file: string, name: string, at: Where, what = 'body'): Buffer {
  const path = resolve(dirname(file), name)
  try {
    return readFileSync(path)
  } catch (err) {
    throw fault(at, `${what} file ${name} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`)
  }
}

/**
 * A gRPC message as JSON text (a data file's or an inline line's): parsed,
 * or kept as text when it holds template actions (rendered per call, and
 * perhaps no JSON until then: `"n": {{.RequestNumber}}`). Its fit to the
 * method's type, and its actions, are checked with the schema.
 */
function readMessage(text: string, at: Where, what: string): { message: unknown } | { messageText: string } {
  if (isTemplate(text)) return { messageText: text.trim() }
  try {
    return { message: parseKeepingIntegers(text) }
  } catch (err) {
    throw fault(at, `${what} is not valid JSON (${(err as Error).message})`)
  }
}

/** A target as read, checked by the one schema (a fault in it named with its line), remembering that line. */
function checked(spec: Record<string, unknown>, at: Where): TargetSpec {
  const result = check(TargetSpecSchema, { ...spec, at: `${at.file}:${at.line}` })
  if ('problem' in result) throw fault(at, result.problem)
  return result.value
}

/** A directive line of the HTTP format (`# weight: 3`, `# hedge-delay: p90`): its field and value, or null for a plain comment. */
function directive(line: string, at: Where): { weight: number } | { hedgeDelay: number | string } | null {
  const m = /^#\s*(weight|hedge-delay)\s*:\s*(.*)$/i.exec(line)
  if (!m) return null
  const value = m[2]!.trim()
  if (m[1]!.toLowerCase() === 'weight') {
    const weight = Number(value)
    if (value === '' || !Number.isFinite(weight) || weight <= 0) throw fault(at, `# weight: "${value.slice(0, 20)}" is not a number above 0`)
    return { weight }
  }
  try {
    return { hedgeDelay: parseHedgeDelayFlag(value) }
  } catch {
    throw fault(at, `# hedge-delay: "${value.slice(0, 20)}" is neither a duration (15ms) nor a percentile (p90)`)
  }
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
    if (line.startsWith('#')) {
      const own = current && directive(line, at)
      if (own) {
        // Last-wins would silently drop the first value, as a second @body would be dropped: refused alike.
        if ('weight' in own && 'weight' in current!.spec) throw fault(at, 'a second # weight: line for one target')
        if ('hedgeDelay' in own && 'hedgeDelay' in current!.spec) throw fault(at, 'a second # hedge-delay: line for one target')
        Object.assign(current!.spec, own)
      }
      continue
    }
    if (line === '') {
      close()
      continue
    }
    if (current === null) {
      const words = line.split(/\s+/)
      if (words.length !== 2) throw fault(at, `expected "METHOD path-or-URL" or "CALL package.Service/Method", got "${line.slice(0, 60)}"`)
      const method = knownMethod(words[0]!, at)
      const spec = method === GRPC_TARGET_METHOD ? { call: words[1]! } : { method, path: relativePath(words[1]!, replicas, at) }
      current = { spec, headers: [], at, body: false }
    } else if (line.startsWith('@') || (line.startsWith('{') && 'call' in current.spec)) {
      if (current.body) throw fault(at, `a second ${'call' in current.spec ? 'message' : '@body'} line for one target`)
      current.body = true
      if (!('call' in current.spec)) current.spec.body = readBody(file, line.slice(1).trim(), at)
      else if (line.startsWith('{')) Object.assign(current.spec, readMessage(line, at, 'the message'))
      else {
        const name = line.slice(1).trim()
        Object.assign(current.spec, readMessage(readBody(file, name, at, 'message').toString('utf8'), at, `message file ${name}`))
      }
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

/** Headers (metadata) as a JSON line gives them: an object of name: value (or values). */
const JSON_HEADERS = v.optional(record(v.union([str(), v.array(str())], 'must be a string or an array of strings')))
const JSON_DELAY = v.optional(v.union([num(), str()], 'must be a delay in ms or a percentile like "p90"'))

/** One JSON line's fields (HTTP). */
const JsonLineSchema = exact({
  method: str(),
  path: str(),
  headers: JSON_HEADERS,
  body: v.optional(str()),
  bodyFile: v.optional(str()),
  weight: v.optional(num()),
  hedgeDelay: JSON_DELAY,
})

/** One JSON line's fields (gRPC): the message as `data` (its JSON) or `dataFile`, as ghz's -d and -D. */
const JsonCallSchema = exact({
  call: str(),
  data: v.optional(v.unknown()),
  dataFile: v.optional(str()),
  metadata: JSON_HEADERS,
  weight: v.optional(num()),
  hedgeDelay: JSON_DELAY,
})

const headerPairs = (headers: Record<string, string | string[]> | undefined): Array<[string, string]> =>
  Object.entries(headers ?? {}).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((one): [string, string] => [name, one]))

function readJsonLines(file: string, lines: readonly string[], replicas: readonly URL[]): TargetSpec[] {
  const targets: TargetSpec[] = []
  for (const [i, raw] of lines.entries()) {
    const at = { file, line: i + 1 }
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    let parsed: unknown
    try {
      parsed = parseKeepingIntegers(line)
    } catch (err) {
      throw fault(at, `not a JSON object (${(err as Error).message})`)
    }
    targets.push(typeof parsed === 'object' && parsed !== null && 'call' in parsed ? jsonCall(parsed, file, at) : jsonRequest(parsed, file, at, replicas))
  }
  return targets
}

function jsonRequest(parsed: unknown, file: string, at: Where, replicas: readonly URL[]): TargetSpec {
  const shape = check(JsonLineSchema, parsed)
  if ('problem' in shape) throw fault(at, shape.problem)
  const { headers, body, bodyFile, path, method, ...rest } = shape.value
  if (body !== undefined && bodyFile !== undefined) throw fault(at, 'give "body" or "bodyFile", not both')
  if (knownMethod(method, at) === GRPC_TARGET_METHOD) throw fault(at, 'a gRPC target is {"call": "package.Service/Method", ...}')
  const pairs = headerPairs(headers)
  const content = bodyFile !== undefined ? readBody(file, bodyFile, at) : body !== undefined ? Buffer.from(body) : undefined
  return checked(
    { method, path: relativePath(path, replicas, at), ...rest, ...(pairs.length > 0 ? { headers: pairs } : {}), ...(content ? { body: content } : {}) },
    at,
  )
}

function jsonCall(parsed: unknown, file: string, at: Where): TargetSpec {
  const shape = check(JsonCallSchema, parsed)
  if ('problem' in shape) throw fault(at, shape.problem)
  const { metadata, data, dataFile, ...rest } = shape.value
  if (data !== undefined && dataFile !== undefined) throw fault(at, 'give "data" or "dataFile", not both')
  const pairs = headerPairs(metadata)
  const message =
    dataFile !== undefined
      ? readMessage(readBody(file, dataFile, at, 'data').toString('utf8'), at, `data file ${dataFile}`)
      : data !== undefined
        ? { message: data }
        : {}
  return checked({ ...rest, ...message, ...(pairs.length > 0 ? { headers: pairs } : {}) }, at)
}
