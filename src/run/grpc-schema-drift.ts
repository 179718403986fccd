/**
 * A --proto or --protoset that differs from what the server itself serves by
 * reflection, for the called method's request and response messages: a
 * field whose number or type differs, a field one side lacks. A message
 * encoded by one schema is read otherwise by the other (a field number
 * moved is a value lost, or read into another field), and nothing in the
 * answers says so; the run says it once, before anything is measured.
 *
 * Best effort: a server without reflection, or one that cannot be asked,
 * gets no warning and no error (the schema given is what the run uses).
 */
import type * as Protobuf from 'protobufjs'
import { isGrpcUrl, shownOrigin } from '../core/target-url.js'
import { loadGrpcMethod, splitCall, type GrpcMethod } from '../protocol/grpc-method.js'
import { reflectSchema } from './grpc-reflection.js'
import { resolveTls } from './resolve-options.js'
import type { RunOptions } from './run-options.js'

/** The differences named in the warning; the rest counted. */
const SHOWN = 3
/** How deep nested messages are compared (a schema's messages may refer to each other in a cycle). */
const MAX_DEPTH = 8

/** The warning, or null when the schemas agree, no schema was given, or the server serves none. */
export async function schemaDriftWarning(options: RunOptions): Promise<string | null> {
  const g = options.grpc
  const url = options.urls?.find(isGrpcUrl)
  const flag = g?.protoset !== undefined ? '--protoset' : g?.proto !== undefined ? '--proto' : null
  if (url === undefined || !g || flag === null || g.descriptorSet !== undefined || g.call === undefined) return null
  const given = loadGrpcMethod(g, g.call)
  let served: GrpcMethod
  try {
    const descriptorSet = await reflectSchema(url, splitCall(given.call).serviceName, {
      tls: resolveTls(options, options.urls ?? []),
      metadata: options.headers ?? [],
      timeoutMs: Math.min(options.timeoutMs ?? 10_000, 10_000),
    })
    served = loadGrpcMethod({ descriptorSet }, given.call)
  } catch {
    return null
  }
  const diffs = [...messageDiffs(given.requestType, served.requestType), ...messageDiffs(given.responseType, served.responseType)]
  if (diffs.length === 0) return null
  const more = diffs.length > SHOWN ? `; ${diffs.length - SHOWN} more` : ''
  return `${flag} ${g.protoset ?? g.proto} differs from the schema ${shownOrigin(url)} serves by reflection for ${given.call}: ${diffs.slice(0, SHOWN).join('; ')}${more} (a message one encodes, the other reads otherwise: update the file, or leave it out to use the server's)`
}

/** What differs between a message as the file declares it (`mine`) and as the server does, nested messages included. */
export function messageDiffs(mine: Protobuf.Type, theirs: Protobuf.Type, path = mine.name, depth = 0): string[] {
  const out: string[] = []
  const theirsByName = new Map(theirs.fieldsArray.map((f) => [key(f.name), f]))
  for (const f of mine.fieldsArray) {
    const other = theirsByName.get(key(f.name))
    theirsByName.delete(key(f.name))
    const at = `${path}.${f.name}`
    if (!other) out.push(`${at} (field ${f.id}) is not in the server's`)
    else if (f.id !== other.id) out.push(`${at} is field ${f.id} in the file, ${other.id} on the server`)
    else if (typeOf(f) !== typeOf(other)) out.push(`${at} is ${typeOf(f)} in the file, ${typeOf(other)} on the server`)
    else if (isType(f.resolvedType) && isType(other.resolvedType) && depth < MAX_DEPTH)
      out.push(...messageDiffs(f.resolvedType, other.resolvedType, at, depth + 1))
  }
  for (const f of theirsByName.values()) out.push(`${path}.${f.name} (field ${f.id}) is only in the server's`)
  return out
}

/** Field names as a .proto writes them and as a descriptor set loads them (snake_case, camelCase) compare alike. */
function key(name: string): string {
  return name.replace(/_/g, '').toLowerCase()
}

function isType(t: Protobuf.Type | Protobuf.Enum | null): t is Protobuf.Type {
  return t !== null && 'fieldsArray' in t
}

/** `int64`, `repeated shop.v1.Dims`, `map<string, int32>`: a message or enum by its full name. */
function typeOf(f: Protobuf.Field): string {
  f.resolve()
  const t = f.resolvedType ? f.resolvedType.fullName.replace(/^\./, '') : f.type
  if (f.map) return `map<${(f as unknown as { keyType: string }).keyType}, ${t}>`
  return f.repeated ? `repeated ${t}` : t
}
