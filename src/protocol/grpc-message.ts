/**
 * The request message of a gRPC run, encoded once before the run: every
 * attempt of every mode sends these same bytes.
 *
 * JSON (`-d`, `-D`) is read with protobufjs's ProtoJSON reader, which follows
 * the protobuf JSON mapping (lowerCamel and original field names, enums by
 * name or number, 64-bit integers as strings, bytes as base64, well-known
 * types in their JSON forms) and rejects unknown fields: a typo must be an
 * error, not a silently empty field (fromObject drops it).
 */
import { readFileSync } from 'node:fs'
import { UsageError } from '../core/errors.js'
import type { GrpcMethod } from './grpc-method.js'
import { frameMessage } from './grpc-frame.js'
import { protojson } from './protobuf-lazy.js'

export interface GrpcMessageSource {
  /** `-d`: the message as JSON text. */
  data?: string
  /** `-D`: a file holding the JSON. */
  dataFile?: string
  /** `-B`: a file holding the already-encoded message bytes. */
  binaryFile?: string
}

/** The length-prefixed request body (one gRPC message frame). */
export function encodeRequestBody(method: GrpcMethod, source: GrpcMessageSource): Buffer {
  return frameMessage(encodeRequestMessage(method, source))
}

/** The protobuf encoding of the request message (no frame). No source: the empty message. */
export function encodeRequestMessage(method: GrpcMethod, source: GrpcMessageSource): Uint8Array {
  const given = [source.data, source.dataFile, source.binaryFile].filter((v) => v !== undefined).length
  if (given > 1) throw new UsageError('use one of -d, -D and -B for the request message')
  if (source.binaryFile !== undefined) return readBinary(method, source.binaryFile)
  const { text, flag } = jsonSource(source)
  return fromJsonText(method, text, flag)
}

/** The JSON text of -d or -D, and how to name it in a message. */
export function jsonSource(source: GrpcMessageSource): { text: string; flag: string } {
  if (source.dataFile !== undefined) return { text: readText(source.dataFile, '-D'), flag: `-D ${source.dataFile}` }
  return { text: source.data ?? '{}', flag: '-d' }
}

/** JSON text as the encoded request message; a problem is one line naming `flag`. */
export function fromJsonText(method: GrpcMethod, text: string, flag: string): Uint8Array {
  let json: unknown
  try {
    json = parseKeepingIntegers(text)
  } catch (err) {
    throw new UsageError(`${flag} is not valid JSON: ${(err as Error).message}`)
  }
  return fromJsonValue(method, json, flag)
}

/** A parsed JSON value as the encoded request message; a problem is one line naming `flag`. */
export function fromJsonValue(method: GrpcMethod, json: unknown, flag: string): Uint8Array {
  const typeName = method.requestType.fullName.replace(/^\./, '')
  try {
    const message = protojson().fromJson(method.requestType, json)
    return method.requestType.encode(message).finish()
  } catch (err) {
    throw new UsageError(`${flag} does not fit ${typeName}: ${fieldProblem(method.requestType, json, err as Error)}`)
  }
}

type MessageType = GrpcMethod['requestType']
type Field = MessageType['fieldsArray'][number]

/**
 * protojson names the type of a field it refuses (".shop.Dims.x: invalid
 * integer"), which the same type at two places in a message leaves
 * ambiguous, and says "invalid encoding" for bad base64 without naming the
 * field at all: the path in the user's JSON (dims.x, items[1].sku) instead,
 * found by fitting one field at a time.
 */
function fieldProblem(type: MessageType, json: unknown, err: Error): string {
  const why = err.message === 'invalid encoding' ? 'not valid base64' : err.message.replace(/^\.?[\w.]+: /, '')
  const path = failingPath(type, json)
  if (path === null) return err.message
  return path === '' ? why : `${path}: ${why}`
}

/**
 * The JSON path of the first field protojson refuses in `json` (as a
 * `type`); '' when it is a field the type does not have (the message names
 * it), null when no single field is refused.
 */
function failingPath(type: MessageType, json: unknown, depth = 0): string | null {
  if (typeof json !== 'object' || json === null || Array.isArray(json) || depth > 32) return null
  for (const [key, value] of Object.entries(json)) {
    if (fits(type, { [key]: value })) continue
    const field = type.fieldsArray.find((f) => f.name === key || jsonName(f) === key || jsonName(f) === lowerCamel(key))
    if (!field) return ''
    const inner = field.resolvedType && 'fieldsArray' in field.resolvedType ? (field.resolvedType as MessageType) : null
    return key + (inner ? innerPath(field, inner, value, depth) : '')
  }
  return null
}

/** Within a message field (one, repeated, or a map's values): ".x", "[1].x", ".k.x", or "" when the field as a whole is refused. */
function innerPath(field: Field, inner: MessageType, value: unknown, depth: number): string {
  const elements: Array<[string, unknown]> =
    field.map && value && typeof value === 'object'
      ? Object.entries(value).map(([k, v]) => [`.${k}`, v])
      : field.repeated && Array.isArray(value)
        ? value.map((v, i) => [`[${i}]`, v])
        : [['', value]]
  for (const [at, element] of elements) {
    if (fits(inner, element)) continue
    const deeper = failingPath(inner, element, depth + 1)
    return at + (deeper ? `.${deeper}` : '')
  }
  return ''
}

function fits(type: MessageType, json: unknown): boolean {
  try {
    protojson().fromJson(type, json)
    return true
  } catch {
    return false
  }
}

/** The lowerCamelCase name the JSON mapping gives a field (json_name when the proto sets one); the schema may hold either name. */
const jsonName = (f: Field): string => (f.options?.['json_name'] as string | undefined) ?? lowerCamel(f.name)
const lowerCamel = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

/** -B bytes are checked to decode as the request type, so a wrong file fails before the run. */
function readBinary(method: GrpcMethod, file: string): Uint8Array {
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch (err) {
    throw new UsageError(`cannot read -B ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  try {
    method.requestType.decode(bytes)
  } catch (err) {
    throw new UsageError(`-B ${file} is not an encoded ${method.requestType.fullName.replace(/^\./, '')}: ${(err as Error).message}`)
  }
  return bytes
}

function readText(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read ${flag} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
}

/**
 * JSON.parse, except that an integer beyond 2^53 keeps every digit, as a
 * string: JSON.parse would round 9007199254740993 to ...992, and the
 * protobuf JSON mapping reads 64-bit integer fields from strings (the
 * number the user wrote, not the nearest double, reaches the server).
 * Parsed as given first, so that an error names the user's own position.
 */
export function parseKeepingIntegers(text: string): unknown {
  const json: unknown = JSON.parse(text)
  const quoted = quoteUnsafeIntegers(text)
  return quoted === text ? json : JSON.parse(quoted)
}

/** The JSON text with every integer that a double cannot hold exactly in quotes; strings are skipped whole. */
function quoteUnsafeIntegers(text: string): string {
  let out = ''
  let copied = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++
      continue
    }
    if (c !== '-' && !(c >= '0' && c <= '9')) continue
    let end = i + 1
    while (end < text.length && /[0-9.eE+-]/.test(text[end]!)) end++
    const token = text.slice(i, end)
    if (/^-?\d+$/.test(token) && !Number.isSafeInteger(Number(token))) {
      out += `${text.slice(copied, i)}"${token}"`
      copied = end
    }
    i = end - 1
  }
  return copied === 0 ? text : out + text.slice(copied)
}
