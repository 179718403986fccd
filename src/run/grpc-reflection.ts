/**
 * A gRPC run's schema read from the server, as ghz and grpcurl read it when
 * given no proto: gRPC server reflection (grpc.reflection.v1, else
 * v1alpha on servers that only have the older one). The file declaring
 * --call's service comes first, then every file it imports that the server
 * did not send with it; the files become one FileDescriptorSet, which
 * grpc-method.ts loads as it loads a --protoset.
 *
 * Each request is one message on its own stream (the service is a bidi
 * stream; a client may half-close after one request), over node:http2 with
 * the run's TLS settings and metadata, before anything is measured.
 */
import { connect, constants, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2'
import { fileURLToPath } from 'node:url'
import type * as Protobuf from 'protobufjs'
import { TargetUnreachableError, UsageError } from '../core/errors.js'
import { isGrpcUrl, shownOrigin, transportOrigin } from '../core/target-url.js'
import { frameMessage, unframeMessages } from '../protocol/grpc-frame.js'
import { splitCall } from '../protocol/grpc-method.js'
import { descriptorTypes, protobuf } from '../protocol/protobuf-lazy.js'
import { grpcCodeName } from '../protocol/grpc-status.js'
import { isTlsError, tlsConnectOptions, tlsFailure, type TlsSettings } from '../engine/tls-options.js'
import type { RunOptions } from './run-options.js'
import { resolveTls } from './resolve-options.js'

const REFLECTION_PROTO = fileURLToPath(new URL('../../../proto/grpc/reflection/v1/reflection.proto', import.meta.url))
const VERSIONS = ['grpc.reflection.v1', 'grpc.reflection.v1alpha'] as const
const GRPC_UNIMPLEMENTED = 12
/** A schema of more files than this is not a service's: a server answering in circles. */
const MAX_FILES = 1000

/**
 * The options with the schema read by reflection, when the run asks for it:
 * `grpc.reflect`, or grpc:// targets given neither --proto nor --protoset.
 * Otherwise (HTTP, a schema given, no --call yet) the options as they were.
 */
export async function withReflectedSchema(options: RunOptions): Promise<RunOptions> {
  const g = options.grpc
  const url = options.urls?.find(isGrpcUrl)
  if (url === undefined || g?.descriptorSet !== undefined) return options
  const given = g?.proto !== undefined || g?.protoset !== undefined
  if (given && g?.reflect) throw new UsageError('--reflect reads the schema from the server: give it without --proto/--protoset')
  const calls = g?.call !== undefined ? [g.call] : targetCalls(options.targets)
  if (given || calls.length === 0 || calls.some((c) => c.trim() === '')) return options
  const services = [...new Set(calls.map((c) => splitCall(c.trim()).serviceName))]
  const descriptorSet = await reflectSchema(url, services, {
    tls: resolveTls(options, options.urls),
    metadata: options.headers ?? [],
    timeoutMs: Math.min(options.timeoutMs ?? 10_000, 10_000),
  })
  return { ...options, grpc: { ...g, descriptorSet } }
}

/** A mix's calls (--targets of CALL lines), whose services reflection reads; none when the targets are not a list of them. */
function targetCalls(targets: unknown): string[] {
  if (!Array.isArray(targets)) return []
  return targets.flatMap((t: unknown) =>
    typeof t === 'object' && t !== null && typeof (t as { call?: unknown }).call === 'string' ? [(t as { call: string }).call] : [],
  )
}

export interface ReflectOptions {
  tls: TlsSettings
  /** Sent with each request (credentials a server may want for reflection too; `host` is the :authority). */
  metadata: ReadonlyArray<readonly [string, string]>
  timeoutMs: number
}

/** The FileDescriptorSet of `service` (or of several: a mix's) and its imports, from the server at `url` (grpc:// or grpcs://). */
export async function reflectSchema(url: string, service: string | readonly string[], o: ReflectOptions): Promise<Uint8Array> {
  const [first, ...others] = typeof service === 'string' ? [service] : service
  const name = shownOrigin(url)
  const link: Link = { name, broken: null }
  const session = await open(url, link, o)
  try {
    const ask = async (version: string, request: ReflectionRequest) => call(session, version, request, link, o)
    let version: string = VERSIONS[0]
    let answer = await ask(version, { fileContainingSymbol: first! })
    if (answer === 'unimplemented') {
      version = VERSIONS[1]
      answer = await ask(version, { fileContainingSymbol: first! })
    }
    if (answer === 'unimplemented')
      throw new UsageError(`${name} has no server reflection (${VERSIONS.join(', ')}: UNIMPLEMENTED): give the schema with --proto FILE or --protoset FILE`)
    const files = new Map<string, Uint8Array>()
    const wanted = new Set<string>()
    const take = (found: Uint8Array[]) => {
      for (const bytes of found) {
        const file = fileDescriptor(bytes)
        if (!files.has(file.name)) files.set(file.name, bytes)
        for (const dep of file.dependency) wanted.add(dep)
      }
    }
    take(filesOf(answer, `the service ${first!}`, name))
    for (const other of others) take(filesOf(await ask(version, { fileContainingSymbol: other }), `the service ${other}`, name))
    // Imports the server did not send with the file, asked for by name until none is missing.
    for (let missing = [...wanted].filter((f) => !files.has(f)); missing.length > 0; missing = [...wanted].filter((f) => !files.has(f))) {
      if (files.size + missing.length > MAX_FILES) throw new UsageError(`the schema read by reflection from ${name} has more than ${MAX_FILES} files`)
      const answers = await Promise.all(missing.map((f) => ask(version, { fileByFilename: f })))
      answers.forEach((a, i) => take(filesOf(a, `the file ${missing[i]!}`, name)))
      for (const f of missing) if (!files.has(f)) throw new UsageError(`reflection on ${name} did not send ${f}, which the schema imports`)
    }
    return descriptorSet([...files.values()])
  } finally {
    session.close()
  }
}

interface ReflectionRequest {
  fileContainingSymbol?: string
  fileByFilename?: string
}

interface ReflectionResponse {
  fileDescriptorResponse?: { fileDescriptorProto: Uint8Array[] }
  errorResponse?: { errorCode: number; errorMessage: string }
}

let types: { request: Protobuf.Type; response: Protobuf.Type } | null = null

function reflectionTypes(): { request: Protobuf.Type; response: Protobuf.Type } {
  if (types) return types
  const root = new (protobuf().Root)().loadSync(REFLECTION_PROTO)
  types = { request: root.lookupType('grpc.reflection.v1.ServerReflectionRequest'), response: root.lookupType('grpc.reflection.v1.ServerReflectionResponse') }
  return types
}

/** The target as messages name it, and what broke its connection once it was made (a TLS 1.3 server refuses a client certificate only then). */
interface Link {
  name: string
  broken: NodeJS.ErrnoException | null
}

/** A connection that failed: its TLS handshake (one line, what to do), or the target not there. */
function unreachable(link: Link, err: NodeJS.ErrnoException): TargetUnreachableError {
  const code = err.code ?? err.message
  if (isTlsError(code)) return new TargetUnreachableError(tlsFailure(link.name, err))
  return new TargetUnreachableError(`cannot connect to ${link.name} to read its schema by reflection (${code}): is the target running?`)
}

function open(url: string, link: Link, o: ReflectOptions): Promise<ClientHttp2Session> {
  const name = link.name
  const origin = transportOrigin(url)
  const host = new URL(origin).hostname.replace(/^\[|\]$/g, '')
  return new Promise((resolve, reject) => {
    const session = connect(origin, origin.startsWith('https:') ? tlsConnectOptions(o.tls, host) : {})
    const timer = setTimeout(() => {
      session.destroy()
      reject(
        new TargetUnreachableError(`cannot connect to ${name} to read its schema by reflection (no answer within ${o.timeoutMs} ms): is the target running?`),
      )
    }, o.timeoutMs)
    session.once('connect', () => {
      clearTimeout(timer)
      session.removeAllListeners('error')
      session.on('error', (err: NodeJS.ErrnoException) => (link.broken ??= err)) // the call on it reports it
      resolve(session)
    })
    session.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      reject(unreachable(link, err))
    })
  })
}

/** One request on its own stream: the response, or 'unimplemented' (this version of the service is not there). */
function call(
  session: ClientHttp2Session,
  version: string,
  request: ReflectionRequest,
  link: Link,
  o: ReflectOptions,
): Promise<ReflectionResponse | 'unimplemented'> {
  const name = link.name
  const { request: requestType, response: responseType } = reflectionTypes()
  const authority = o.metadata.find(([k]) => k.toLowerCase() === 'host')?.[1]
  const headers: Record<string, string | string[]> = {
    [constants.HTTP2_HEADER_METHOD]: 'POST',
    [constants.HTTP2_HEADER_PATH]: `/${version}.ServerReflection/ServerReflectionInfo`,
    ...(authority !== undefined ? { [constants.HTTP2_HEADER_AUTHORITY]: authority } : {}),
    'content-type': 'application/grpc',
    te: 'trailers',
  }
  for (const [k, v] of o.metadata) if (k.toLowerCase() !== 'host') headers[k.toLowerCase()] = v
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: false })
    const chunks: Buffer[] = []
    let status: string | undefined
    const fail = (why: string) => reject(new UsageError(`cannot read the schema of ${name} by reflection: ${why}`))
    stream.setTimeout(o.timeoutMs, () => {
      stream.close(constants.NGHTTP2_CANCEL)
      fail(`no answer within ${o.timeoutMs} ms`)
    })
    stream.on('response', (h: IncomingHttpHeaders) => {
      status = h['grpc-status'] as string | undefined
      if (Number(h[':status']) !== 200) fail(`it answered HTTP ${h[':status']} ${h['content-type'] ?? ''}`.trim())
    })
    stream.on('trailers', (h: IncomingHttpHeaders) => (status = (h['grpc-status'] as string | undefined) ?? status))
    stream.on('data', (c: Buffer) => chunks.push(c))
    stream.on('error', (err: NodeJS.ErrnoException) => {
      const broken = link.broken ?? (isTlsError(err.code ?? '') ? err : null)
      if (broken) reject(unreachable(link, broken))
      else fail(err.message)
    })
    stream.on('end', () => {
      const code = Number(status ?? 2)
      if (code === GRPC_UNIMPLEMENTED) return resolve('unimplemented')
      if (code !== 0) return fail(`${version} answered ${grpcCodeName(code)}`)
      try {
        const message = unframeMessages(Buffer.concat(chunks))[0]
        if (message === undefined) return fail(`${version} sent no answer`)
        resolve(responseType.toObject(responseType.decode(message), { defaults: false }) as ReflectionResponse)
      } catch (err) {
        fail(`its answer does not decode: ${(err as Error).message}`)
      }
    })
    stream.end(frameMessage(requestType.encode(requestType.fromObject(request)).finish()))
  })
}

/** The FileDescriptorProtos of an answer; the server's error (NOT_FOUND: no such service) as one line. */
function filesOf(answer: ReflectionResponse | 'unimplemented', what: string, name: string): Uint8Array[] {
  if (answer === 'unimplemented') throw new UsageError(`reflection on ${name} stopped answering`)
  const error = answer.errorResponse
  if (error)
    throw new UsageError(
      `${name} has no ${what.replace(/^the /, '')} (reflection: ${grpcCodeName(error.errorCode)}${error.errorMessage ? `, ${error.errorMessage}` : ''}): check --call`,
    )
  const files = answer.fileDescriptorResponse?.fileDescriptorProto ?? []
  if (files.length === 0) throw new UsageError(`reflection on ${name} sent no file for ${what}`)
  return files
}

function fileDescriptor(bytes: Uint8Array): { name: string; dependency: string[] } {
  const type = descriptorTypes().lookupType('FileDescriptorProto')
  const file = type.decode(bytes) as unknown as { name?: string; dependency?: string[] }
  return { name: file.name ?? '', dependency: file.dependency ?? [] }
}

/** A FileDescriptorSet is its files as field 1, each as length-delimited bytes: the server's bytes kept as they came. */
function descriptorSet(files: Uint8Array[]): Uint8Array {
  const parts: Uint8Array[] = []
  for (const file of files) parts.push(Uint8Array.of(0x0a), varint(file.length), file)
  return Buffer.concat(parts)
}

function varint(n: number): Uint8Array {
  const out: number[] = []
  for (; n >= 0x80; n = Math.floor(n / 0x80)) out.push((n % 0x80) | 0x80)
  out.push(n)
  return Uint8Array.from(out)
}
