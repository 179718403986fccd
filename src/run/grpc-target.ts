/**
 * A run against gRPC targets (grpc://host:port, grpcs://host:port): the
 * method resolved in the user's schema and its message encoded once, before
 * anything is sent, so every attempt of every mode sends the same bytes.
 */
import { UsageError } from '../core/errors.js'
import { isGrpcUrl } from '../core/target-url.js'
import { redactUrl } from '../core/redact.js'
import { encodeRequestMessage, fromJsonText, fromJsonValue, jsonSource } from '../protocol/grpc-message.js'
import { compileTemplate, isTemplate, refuseMetadataActions, type GrpcTemplate, type TemplateInput } from '../protocol/grpc-template.js'
import { dataCycle, encodeDataList } from '../protocol/grpc-data.js'
import { seededRandom } from '../core/random.js'
import { frameMessage } from '../protocol/grpc-frame.js'
import { loadGrpcMethod, loadSchema, resolveCall } from '../protocol/grpc-method.js'
import type { GrpcMethod, GrpcSchemaSource, IdempotencyLevel } from '../protocol/grpc-method.js'
import type { GrpcRunOptions } from './run-options.js'
import type { GrpcTargetCall, ResolvedTarget } from './target-spec.js'
import { methodConfigFor, type ServiceConfig } from '../protocol/grpc-service-config.js'
import { DEFAULT_MAX_RECV_BYTES, MAX_RECV_LIMIT_BYTES } from '../protocol/grpc-body-reader.js'

export interface ResolvedGrpc {
  /** `package.Service/Method`. */
  call: string
  /** The HTTP/2 :path. */
  path: string
  /** The framed request message. */
  body: Buffer
  /** The encoded message without its frame (what a gRPC client library is given). */
  message: Buffer
  /** Set when a grpc-js client also runs the hedged calls with this service config. */
  serviceConfig: ServiceConfig | null
  /** What the method's descriptor says about calling it twice. */
  idempotency: IdempotencyLevel
  /** The schema file it came from (--proto or --protoset), for the refusal to name. */
  schemaFile: string
  /** -d/-D with template actions: each call renders its own message (callMessages); `message` is call 0's. */
  template: GrpcTemplate | null
  /** --max-recv-size: a response message longer than this is refused (RESOURCE_EXHAUSTED), bytes. */
  maxRecvBytes: number
  /** -d/-D of several messages (a JSON array, NDJSON), each encoded once, and the order the calls send them in; null: one message. */
  dataList: { messages: Uint8Array[]; order: 'round-robin' | 'random' } | null
}

/** null for HTTP targets; every URL must be gRPC or none. `mix`: the calls come from the targets (--targets), not --call. */
export function resolveGrpc(urls: string[], options: GrpcRunOptions | undefined, mix = false): ResolvedGrpc | null {
  const grpc = urls.filter(isGrpcUrl)
  if (grpc.length === 0) {
    if (options?.call !== undefined) throw new UsageError('--call is for grpc:// targets (got http URLs)')
    if (options?.hedgeBy === 'grpc-js') throw new UsageError('--hedge-by grpc-js needs grpc:// targets')
    if (options?.maxRecvBytes !== undefined) throw new UsageError('--max-recv-size is for grpc:// targets (got http URLs)')
    return null
  }
  if (grpc.length !== urls.length) throw new UsageError('mix of grpc:// and http URLs: every replica of a run speaks the same protocol')
  for (const raw of grpc) checkGrpcUrl(raw)
  if (mix) return resolveGrpcMix(options ?? {})
  const method = loadGrpcMethod(options ?? {}, options?.call)
  const template = templateOf(options ?? {}, method.call)
  const dataList = template ? null : dataListOf(method, options ?? {})
  // A template is rendered once here too: a message that does not fit the type is refused before the run.
  const message = Buffer.from(
    template ? templateEncoder(method, template)(firstCall()) : (dataList?.messages[0] ?? encodeRequestMessage(method, options ?? {})),
  )
  const serviceConfig = clientConfig(options ?? {})
  if (serviceConfig) checkServiceConfig(serviceConfig, method.path)
  return {
    call: method.call,
    path: method.path,
    body: frameMessage(message),
    message,
    serviceConfig,
    idempotency: method.idempotency,
    schemaFile: schemaFileOf(options),
    template,
    maxRecvBytes: recvLimit(options?.maxRecvBytes),
    dataList,
  }
}

const schemaFileOf = (o: GrpcRunOptions | undefined): string => o?.protoset ?? o?.proto ?? ''

/**
 * A mix of calls (--targets against grpc:// replicas): the run's own call,
 * path and message stay empty, every request is a target's (grpcTargetCall).
 */
function resolveGrpcMix(o: GrpcRunOptions): ResolvedGrpc {
  const own = (['call', 'data', 'dataFile', 'binaryFile'] as const).filter((k) => o[k] !== undefined)
  if (own.length > 0) throw new UsageError(`grpc.${own.join(', grpc.')} with targets: each target gives its own call and message`)
  if ((o.hedgeBy ?? 'hedgebench') !== 'hedgebench')
    throw new UsageError('--hedge-by grpc-js runs one method through grpc-js: with --targets, `hedgebench sweep --targets ... --verify` checks each method')
  return {
    call: '',
    path: '',
    body: frameMessage(new Uint8Array()),
    message: Buffer.alloc(0),
    serviceConfig: null,
    idempotency: 'IDEMPOTENCY_UNKNOWN',
    schemaFile: schemaFileOf(o),
    template: null,
    maxRecvBytes: recvLimit(o.maxRecvBytes),
    dataList: null,
  }
}

/**
 * How a mix's targets resolve (target-spec.ts resolveTargets): the schema
 * loaded once, each target's call resolved in it and its message encoded, a
 * fault named by the target's place ("mix.txt:4: method ..."). A message
 * holding template actions is rendered per call, as -d's (callMessages): its
 * `body` is call 0's, rendered here so that a message that does not fit the
 * type is refused before the run. Its metadata is sent as given: an action
 * in it is refused, as in -m's.
 */
export function grpcTargetCall(o: GrpcRunOptions): GrpcTargetCall {
  const root = loadSchema(o)
  return (target, at) => {
    try {
      refuseMetadataActions(target.headers ?? [])
      const method = resolveCall(root, target.call.trim())
      const text = target.messageText ?? JSON.stringify(target.message ?? {})
      const template = isTemplate(text) ? { text, flag: 'its message', call: method.call, schema: schemaOf(o) } : null
      const message = template
        ? templateEncoder(method, template)(firstCall())
        : target.messageText !== undefined
          ? fromJsonText(method, target.messageText, 'its message')
          : fromJsonValue(method, target.message ?? {}, 'its message')
      return { call: method.call, path: method.path, body: frameMessage(message), safe: method.idempotency !== 'IDEMPOTENCY_UNKNOWN', template }
    } catch (err) {
      if (err instanceof UsageError) throw new UsageError(`${at}: ${err.message}`)
      throw err
    }
  }
}

/** The input a template is rendered with once before the run, to check it: call 0, its own randomness (not the run's). */
const firstCall = (): TemplateInput => ({ requestNumber: 0, random: seededRandom(0) })

/** -d/-D holding several messages (encodeDataList), with --data-order; null for one message or -B. */
function dataListOf(method: GrpcMethod, o: GrpcRunOptions): ResolvedGrpc['dataList'] {
  const order = o.dataOrder ?? 'round-robin'
  if (order !== 'round-robin' && order !== 'random') throw new UsageError(`invalid --data-order "${String(order)}" (choose one of: round-robin, random)`)
  if (o.binaryFile !== undefined || (o.data !== undefined && o.dataFile !== undefined)) return null
  const { text, flag } = jsonSource(o)
  const messages = encodeDataList(method, text, flag, o.dataFile ?? null)
  return messages ? { messages, order } : null
}

/** A whole number of bytes a length prefix can say (the CLI's units are parsed before: core/byte-size.ts). */
function recvLimit(bytes: number | undefined): number {
  if (bytes === undefined) return DEFAULT_MAX_RECV_BYTES
  if (!Number.isInteger(bytes) || bytes < 0 || bytes > MAX_RECV_LIMIT_BYTES)
    throw new UsageError(`invalid --max-recv-size ${bytes} (a whole number of bytes, 0 to ${MAX_RECV_LIMIT_BYTES})`)
  return bytes
}

function templateOf(o: GrpcRunOptions, call: string): GrpcTemplate | null {
  // More than one message source is refused by encodeRequestMessage; -B bytes are no template.
  if ([o.data, o.dataFile, o.binaryFile].filter((v) => v !== undefined).length !== 1 || o.binaryFile !== undefined) return null
  const { text, flag } = jsonSource(o)
  if (!isTemplate(text)) return null
  return { text, flag, call, schema: schemaOf(o) }
}

/** Where the schema came from, as a thread loads it again (a worker thread cannot be handed a loaded one). */
function schemaOf(o: GrpcRunOptions): GrpcSchemaSource {
  const schema: GrpcSchemaSource = {}
  for (const key of ['proto', 'importPaths', 'protoset', 'descriptorSet'] as const) if (o[key] !== undefined) (schema as Record<string, unknown>)[key] = o[key]
  return schema
}

function templateEncoder(method: GrpcMethod, t: GrpcTemplate): (input: TemplateInput) => Uint8Array {
  const render = compileTemplate(t.text, t.flag)
  return (input) => fromJsonText(method, render(input), t.flag)
}

/** The template's random draws are not the replica picks' (both start from the run's seed). */
const TEMPLATE_SEED_SALT = 0x7e3a1c5d

/**
 * With a template, one encoded message (no frame) per logical call, the
 * calls numbered from 0 across the run; undefined without one (every call
 * then sends the message encoded once). Called once per thread.
 */
export function callMessages(grpc: ResolvedGrpc | null, seed: number, index = 0, stride = 1): CallMessages | undefined {
  const list = grpc?.dataList
  if (list) {
    const message = dataCycle(list.messages, list.order, index, stride, seededRandom(((seed ^ TEMPLATE_SEED_SALT) + index) >>> 0))
    return { message, body: () => frameMessage(message()) }
  }
  return grpc?.template ? templateMessages(grpc.template, seed, index, stride) : undefined
}

/**
 * Each target's messages of a mix on this thread (by target index): a target
 * whose message holds template actions renders one per logical call, its
 * calls numbered from 0 across the run as -d's are, its randomness its own
 * (the run's seed and the target's place); undefined for the others, whose
 * message is encoded once. Called once per thread.
 */
export function targetMessages(targets: readonly ResolvedTarget[] | null, seed: number, index = 0, stride = 1): Array<CallMessages | undefined> {
  // Each target its own seed, a golden-ratio step from the next one's (a thread's is the run's plus its index).
  return (targets ?? []).map((t, k) => (t.template ? templateMessages(t.template, (seed + Math.imul(k + 1, 0x9e3779b9)) >>> 0, index, stride) : undefined))
}

/** Thread `index` of `stride` numbers its calls index, index + stride, ...: the threads together number every call once. */
function templateMessages(t: GrpcTemplate, seed: number, index: number, stride: number): CallMessages {
  const encode = templateEncoder(loadGrpcMethod(t.schema, t.call), t)
  const input: TemplateInput = { requestNumber: index, random: seededRandom(((seed ^ TEMPLATE_SEED_SALT) + index) >>> 0) }
  const message = (): Uint8Array => {
    const bytes = encode(input)
    input.requestNumber += stride
    return bytes
  }
  return { message, body: () => frameMessage(message()) }
}

/** The next call's message: as a gRPC client library takes it, or framed as the engine sends it. One numbering for both. */
export interface CallMessages {
  message(): Uint8Array
  body(): Uint8Array
}

/** The method's own permission to be called twice, as the report words it; null when its descriptor gives none. */
export function grpcSafeToRepeat(grpc: ResolvedGrpc): string | null {
  return grpc.idempotency === 'IDEMPOTENCY_UNKNOWN' ? null : `idempotency_level = ${grpc.idempotency} in the proto`
}

/** A gRPC run that would hedge a method its proto does not mark safe to repeat: what to add, or pass. */
export function grpcWriteRefusal(grpc: ResolvedGrpc): UsageError {
  const method = grpc.call.slice(grpc.call.lastIndexOf('/') + 1)
  const where = grpc.schemaFile ? ` in ${grpc.schemaFile}` : ''
  return new UsageError(
    `refusing to hedge ${grpc.call}: its proto does not say it is safe to call twice (add \`option idempotency_level = NO_SIDE_EFFECTS;\` for a read, or IDEMPOTENT, to rpc ${method}${where}; or pass --idempotency-key to send one key per call on every copy, --unsafe-hedge to do it anyway, or --mode plain)`,
  )
}

/**
 * Before the run, what grpc-js would refuse or ignore: a service config whose
 * methodConfigs all name other methods (grpc-js would not hedge the call, and
 * the report would show a policy nobody asked for), and a hedgingDelay that
 * is not gRPC's JSON Duration ("0.01s").
 */
function checkServiceConfig(config: ServiceConfig, path: string): void {
  const match = methodConfigFor(config, path)
  // A config with no methodConfig at all is grpc-js without hedging, a baseline the report explains; one that names
  // other methods only is a mistake (a package name off by one part), refused.
  const names = (config.methodConfig ?? []).flatMap((m) => (m.name ?? []).map((n) => `${n.service ?? ''}${n.method ? `/${n.method}` : ''}`))
  if (!match && names.length > 0) {
    throw new UsageError(`--service-config has no methodConfig for ${path.slice(1)} (it names ${names.join(', ')}): grpc-js would not hedge this call`)
  }
  const delay = match?.hedgingPolicy?.hedgingDelay as unknown
  if (delay !== undefined && !(typeof delay === 'string' && /^\d+(\.\d+)?s$/.test(delay))) {
    throw new UsageError(`--service-config hedgingPolicy.hedgingDelay ${JSON.stringify(delay)} is not a duration as gRPC writes it (a string such as "0.01s")`)
  }
}

function clientConfig(o: GrpcRunOptions): ServiceConfig | null {
  const by = o.hedgeBy ?? 'hedgebench'
  if (by !== 'hedgebench' && by !== 'grpc-js') throw new UsageError(`invalid --hedge-by "${by}" (choose one of: hedgebench, grpc-js)`)
  if (by === 'hedgebench') {
    if (o.serviceConfig !== undefined) throw new UsageError('--service-config is for --hedge-by grpc-js')
    return null
  }
  if (o.serviceConfig === undefined)
    throw new UsageError('--hedge-by grpc-js needs --service-config FILE (a gRPC service config with methodConfig[].hedgingPolicy)')
  return o.serviceConfig
}

function checkGrpcUrl(raw: string): void {
  const url = new URL(raw)
  if (!url.hostname) throw new UsageError(`gRPC target without a host: "${redactUrl(raw)}" (expected grpc://host:port)`)
  if (url.port === '') throw new UsageError(`gRPC target without a port: "${redactUrl(raw)}" (expected grpc://host:port)`)
  if (url.pathname !== '' && url.pathname !== '/') {
    throw new UsageError(`a gRPC target is grpc://host:port, the method comes from --call (got the path "${url.pathname}")`)
  }
}
