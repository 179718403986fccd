/**
 * The gRPC flags of the run command, ghz-compatible: --proto with -i import
 * paths, or --protoset, or --reflect (the server's reflection); --call; -d/-D as the request message in JSON, -B as
 * its encoded bytes; -m as JSON metadata (ghz's -m; for HTTP targets -m is
 * hey's method) and -H "name: value" as metadata too.
 */
import { readFileSync } from 'node:fs'
import type { Argv } from 'yargs'
import { UsageError } from '../core/errors.js'
import { isGrpcUrl } from '../core/target-url.js'
import { parseGrpcNonFatal } from '../protocol/grpc-status.js'
import { parseByteSize } from '../core/byte-size.js'
import { MAX_RECV_LIMIT_BYTES } from '../protocol/grpc-body-reader.js'
import type { GrpcRunOptions } from '../run/run-options.js'
import type { ServiceConfig } from '../protocol/grpc-service-config.js'

export interface GrpcFlags {
  grpc?: boolean
  proto?: string
  i?: string[]
  protoset?: string
  reflect?: boolean
  dataOrder?: string
  call?: string
  B?: string
  d?: string
  D?: string
  m?: string
  hedgeBy?: string
  serviceConfig?: string
  maxRecvSize?: string
}

export function grpcFlags(y: Argv): Argv {
  return y
    .option('grpc', { type: 'boolean', describe: 'with --profile: built-in gRPC replicas (grpc:// targets need no flag)', group: 'gRPC:' })
    .option('call', { type: 'string', describe: 'gRPC method, package.Service/Method', group: 'gRPC:' })
    .option('proto', { type: 'string', describe: 'the .proto file declaring --call', group: 'gRPC:' })
    .option('i', { type: 'string', array: true, describe: 'import path for --proto and its imports (repeatable)', group: 'gRPC:' })
    .option('protoset', { type: 'string', describe: 'a compiled FileDescriptorSet instead of --proto', group: 'gRPC:' })
    .option('reflect', {
      type: 'boolean',
      describe: "read the schema from the server's reflection service (the default when neither --proto nor --protoset is given)",
      group: 'gRPC:',
    })
    .option('hedge-by', {
      type: 'string',
      describe: 'who hedges: hedgebench (its own policy), or grpc-js (also run the hedged calls through grpc-js with --service-config) [default: hedgebench]',
      group: 'gRPC:',
    })
    .option('service-config', {
      type: 'string',
      describe: 'gRPC service config JSON file (methodConfig[].hedgingPolicy, retryThrottling) for --hedge-by grpc-js',
      group: 'gRPC:',
    })
    .option('data-order', {
      type: 'string',
      describe:
        'gRPC: -d/-D of several messages (a JSON array, or one JSON object a line in -D) are sent round-robin or at random (seeded) [default: round-robin]',
      group: 'gRPC:',
    })
    .option('B', { type: 'string', describe: 'the request message as encoded bytes, from a file (gRPC; -d/-D take JSON)', group: 'gRPC:' })
    .option('max-recv-size', {
      type: 'string',
      describe:
        'the longest response message accepted, judged on its length prefix (bytes, or 4MiB, 512KiB, ...); a longer one fails the call at once as RESOURCE_EXHAUSTED [default: 4MiB]',
      group: 'gRPC:',
    })
}

/**
 * True when the run speaks gRPC: grpc:// or grpcs:// URLs (before or after
 * `--`), or --grpc. --grpc is for --profile's built-in replicas: beside an
 * http:// URL it would be a flag the run cannot honour, so it is refused.
 */
export function isGrpcRun(grpcFlag: boolean, urls: string[]): boolean {
  const http = urls.find((u) => !isGrpcUrl(u))
  if (grpcFlag && http !== undefined)
    throw new UsageError(`--grpc is for --profile's built-in replicas; give a gRPC target as grpc://host:port (got ${JSON.stringify(http)})`)
  return grpcFlag || urls.some(isGrpcUrl)
}

/** The run's GrpcRunOptions; -d/-D are the message's JSON here, not a raw body. */
export function grpcRunOptions(f: GrpcFlags): GrpcRunOptions {
  if (f.d !== undefined && f.D !== undefined) throw new UsageError('give the message with -d or -D, not both')
  const o: GrpcRunOptions = {}
  if (f.call !== undefined) o.call = f.call
  if (f.proto !== undefined) o.proto = f.proto
  if (f.i?.length) o.importPaths = [f.i].flat()
  if (f.protoset !== undefined) o.protoset = f.protoset
  if (f.reflect !== undefined) o.reflect = f.reflect
  if (f.d !== undefined) o.data = f.d
  if (f.D !== undefined) o.dataFile = f.D
  if (f.B !== undefined) o.binaryFile = f.B
  if (f.dataOrder !== undefined) o.dataOrder = f.dataOrder as GrpcRunOptions['dataOrder']
  if (f.hedgeBy !== undefined) o.hedgeBy = f.hedgeBy as GrpcRunOptions['hedgeBy']
  if (f.serviceConfig !== undefined) o.serviceConfig = readServiceConfig(f.serviceConfig)
  if (f.maxRecvSize !== undefined) o.maxRecvBytes = parseByteSize(f.maxRecvSize, '--max-recv-size', MAX_RECV_LIMIT_BYTES)
  return o
}

function readServiceConfig(file: string): ServiceConfig {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read --service-config ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw new UsageError(`--service-config ${file} is not valid JSON: ${(err as Error).message}`)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`--service-config ${file} must hold a JSON object`)
  return value as ServiceConfig
}

/** HTTP runs refuse the gRPC-only flags rather than ignore them. */
export function assertNoGrpcFlags(f: GrpcFlags): void {
  const names = {
    call: '--call',
    proto: '--proto',
    protoset: '--protoset',
    reflect: '--reflect',
    B: '-B',
    i: '-i',
    hedgeBy: '--hedge-by',
    serviceConfig: '--service-config',
    maxRecvSize: '--max-recv-size',
    dataOrder: '--data-order',
  } as const
  const given = (Object.keys(names) as Array<keyof typeof names>).filter((k) => f[k] !== undefined)
  if (given.length > 0) throw new UsageError(`${given.map((k) => names[k]).join(', ')}: only for gRPC targets (grpc://host:port)`)
}

/** ghz's -m: metadata as a JSON object of strings. */
export function grpcMetadata(raw: string | undefined): Array<[string, string]> {
  if (raw === undefined) return []
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    throw new UsageError(`-m for a gRPC target is metadata as JSON, e.g. '{"authorization": "Bearer x"}' (got ${JSON.stringify(raw)})`)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError('-m metadata must be a JSON object of strings')
  return Object.entries(value).map(([k, v]) => {
    if (typeof v !== 'string') throw new UsageError(`-m metadata "${k}" must be a string`)
    return [k.toLowerCase(), v]
  })
}

export { parseGrpcNonFatal }

/**
 * grpc-js logs its own errors to stderr (a failed bind prints "E No address
 * added ..."); the CLI reports every problem itself, in one line.
 */
export async function quietGrpcJs(): Promise<void> {
  const { logVerbosity, setLogVerbosity } = await import('@grpc/grpc-js')
  setLogVerbosity(logVerbosity.NONE)
}
