/**
 * Which gRPC method a run calls, read from the user's schema the way ghz
 * reads it: `--proto FILE` with `-i DIR` import paths, or `--protoset FILE`
 * (a FileDescriptorSet, as `protoc --descriptor_set_out --include_imports`
 * writes), and `--call package.Service/Method`. Every problem is a one-line
 * UsageError: the schema is the user's input.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, isAbsolute, resolve } from 'node:path'
import type * as Protobuf from 'protobufjs'
import { UsageError } from '../core/errors.js'
import { protobuf } from './protobuf-lazy.js'

export interface GrpcSchemaSource {
  /** A .proto file (exclusive with protoset). */
  proto?: string
  /** Directories searched for the proto file and its imports, in order. */
  importPaths?: string[]
  /** A binary FileDescriptorSet (exclusive with proto). */
  protoset?: string
  /** A FileDescriptorSet already read (from the server's reflection service): the schema without a file. */
  descriptorSet?: Uint8Array
}

/** One unary method, resolved against its schema. */
export interface GrpcMethod {
  /** `package.Service/Method`, as the user wrote it (normalised). */
  call: string
  /** The HTTP/2 :path of the call: `/package.Service/Method`. */
  path: string
  requestType: Protobuf.Type
  responseType: Protobuf.Type
  /** The method's `option idempotency_level` (google.protobuf.MethodOptions): whether a call may be sent twice. */
  idempotency: IdempotencyLevel
}

/** google.protobuf.MethodOptions.IdempotencyLevel, by name. */
export type IdempotencyLevel = 'IDEMPOTENCY_UNKNOWN' | 'NO_SIDE_EFFECTS' | 'IDEMPOTENT'

const IDEMPOTENCY_LEVELS: readonly IdempotencyLevel[] = ['IDEMPOTENCY_UNKNOWN', 'NO_SIDE_EFFECTS', 'IDEMPOTENT']

/**
 * The level a method declares. protobufjs keeps a .proto's option as written
 * (`idempotency_level: "IDEMPOTENT"`) and turns a descriptor's MethodOptions
 * into the same key, by name; a number is the enum's value.
 */
export function idempotencyOf(options: Record<string, unknown> | undefined): IdempotencyLevel {
  const raw = options?.['idempotency_level'] ?? options?.['idempotencyLevel']
  if (typeof raw === 'number') return IDEMPOTENCY_LEVELS[raw] ?? 'IDEMPOTENCY_UNKNOWN'
  return (IDEMPOTENCY_LEVELS as readonly unknown[]).includes(raw) ? (raw as IdempotencyLevel) : 'IDEMPOTENCY_UNKNOWN'
}

/** Loads the schema and resolves `--call` in it. */
export function loadGrpcMethod(source: GrpcSchemaSource, call: string | undefined): GrpcMethod {
  if (call === undefined || call.trim() === '') throw new UsageError('a gRPC target needs --call package.Service/Method')
  const root = loadSchema(source)
  return resolveCall(root, call.trim())
}

/** The schema as a resolved protobufjs Root. */
export function loadSchema(source: GrpcSchemaSource): Protobuf.Root {
  if (source.proto !== undefined && source.protoset !== undefined) throw new UsageError('use either --proto or --protoset, not both')
  if (source.descriptorSet !== undefined) return fromDescriptorSet(source.descriptorSet, 'the schema read by server reflection')
  if (source.protoset !== undefined) return loadProtoset(source.protoset)
  if (source.proto !== undefined) return loadProto(source.proto, source.importPaths ?? [])
  throw new UsageError("a gRPC target needs its schema: --proto FILE (with -i DIR for imports), --protoset FILE, or the server's reflection (--reflect)")
}

function loadProto(file: string, importPaths: string[]): Protobuf.Root {
  const dirs = [...importPaths.map((d) => resolve(d)), process.cwd()]
  const main = isAbsolute(file) ? file : (dirs.map((d) => resolve(d, file)).find((p) => existsSync(p)) ?? resolve(file))
  const root = new (protobuf().Root)()
  // Imports are looked up in the -i paths, then beside the importing file, as protoc does.
  root.resolvePath = (origin, target) => {
    if (isAbsolute(target)) return target
    const candidates = [...dirs, origin ? dirname(origin) : process.cwd()].map((d) => resolve(d, target))
    return candidates.find((p) => existsSync(p)) ?? candidates[0]!
  }
  try {
    root.loadSync(main, { keepCase: false })
    root.resolveAll()
  } catch (err) {
    // The file that is missing may be an import of the one given: name it, and where imports are looked up.
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT' ? (err as NodeJS.ErrnoException).path : undefined
    if (missing && existsSync(main))
      throw new UsageError(`cannot load --proto ${file}: an import is missing: no such file ${missing} (-i DIR adds a directory imports are looked up in)`)
    throw new UsageError(`cannot load --proto ${file}: ${reason(err)}`)
  }
  return root
}

function loadProtoset(file: string): Protobuf.Root {
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch (err) {
    throw new UsageError(`cannot read --protoset ${file}: ${reason(err)}`)
  }
  return fromDescriptorSet(bytes, `--protoset ${file}`)
}

function fromDescriptorSet(bytes: Uint8Array, what: string): Protobuf.Root {
  try {
    const root = (protobuf().Root as unknown as { fromDescriptor(b: Uint8Array): Protobuf.Root }).fromDescriptor(bytes)
    root.resolveAll()
    return root
  } catch (err) {
    throw new UsageError(`cannot load ${what} (expected a binary FileDescriptorSet): ${reason(err)}`)
  }
}

/** `pkg.Service/Method` or `pkg.Service.Method` (ghz accepts both), as its service's full name and the method's. */
export function splitCall(call: string): { serviceName: string; methodName: string } {
  const slash = call.lastIndexOf('/')
  const split = slash >= 0 ? slash : call.lastIndexOf('.')
  const serviceName = call.slice(0, Math.max(0, split)).replace(/^\./, '')
  const methodName = call.slice(split + 1)
  if (split <= 0 || methodName === '') throw new UsageError(`--call must be package.Service/Method (got "${call}")`)
  return { serviceName, methodName }
}

/** `call` in a schema already loaded (a mix's calls share one: --targets). */
export function resolveCall(root: Protobuf.Root, call: string): GrpcMethod {
  const { serviceName, methodName } = splitCall(call)
  const service = root.lookup(serviceName)
  if (!(service instanceof protobuf().Service)) {
    throw new UsageError(`service "${serviceName}" is not in the schema (services: ${serviceNames(root).join(', ') || 'none'})`)
  }
  // protobufjs also finds a service by the tail of its name ("shop.v2.Shop" for acme.shop.v2.Shop), but the server
  // routes on the full name: the call would be UNIMPLEMENTED every time.
  const fullName = service.fullName.replace(/^\./, '')
  if (fullName !== serviceName)
    throw new UsageError(`service "${serviceName}" is not in the schema by that name: its full name is ${fullName} (--call ${fullName}/${methodName})`)
  const method = service.methods[methodName]
  if (method === undefined) {
    throw new UsageError(`method "${methodName}" is not in service ${serviceName} (methods: ${Object.keys(service.methods).join(', ') || 'none'})`)
  }
  if (method.requestStream || method.responseStream) throw new UsageError(`${serviceName}/${methodName} is a streaming method; only unary calls are supported`)
  method.resolve()
  return {
    call: `${serviceName}/${methodName}`,
    path: `/${serviceName}/${methodName}`,
    requestType: method.resolvedRequestType!,
    responseType: method.resolvedResponseType!,
    idempotency: idempotencyOf(method.options),
  }
}

function serviceNames(root: Protobuf.Root): string[] {
  const names: string[] = []
  const walk = (ns: Protobuf.NamespaceBase) => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf().Service) names.push(child.fullName.replace(/^\./, ''))
      else if (child instanceof protobuf().Namespace) walk(child)
    }
  }
  walk(root)
  return names
}

function reason(err: unknown): string {
  const e = err as NodeJS.ErrnoException
  if (e.code === 'ENOENT') return 'no such file'
  if (e.code === 'EACCES') return 'permission denied'
  if (e.code === 'EISDIR') return 'is a directory'
  return String(e.message ?? err)
}
