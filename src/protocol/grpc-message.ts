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
  const typeName = method.requestType.fullName.replace(/^\./, '')
  try {
    const message = protojson().fromJson(method.requestType, json)
    return method.requestType.encode(message).finish()
  } catch (err) {
    // protojson names the type path (".pkg.Inner: unknown field: \"usr\""); keep it, it locates nested typos.
    throw new UsageError(`${flag} does not fit ${typeName}: ${(err as Error).message}`)
  }
}

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
