/**
 * Before a gRPC run, one call to each replica on the run's own connections:
 * a port that speaks h2c but not gRPC (a plain node:http2 server answering
 * 200 text/plain) ran a whole run as UNKNOWN, and a method the server does
 * not have as 100 % UNIMPLEMENTED, both with exit 0. Either is refused here
 * in one line.
 *
 * The call carries a message no protobuf parser accepts (one tag byte naming
 * field number 0, which no schema may use, with wire type 7, which does not
 * exist; a truncated field was not enough: protobufjs 7, which grpc-js's
 * proto-loader uses, reads a string field cut short as ""): a server looks its method up
 * from the headers first (an unknown one answers UNIMPLEMENTED), and one that
 * decodes its requests (grpc-js, C-core, grpc-go, Java) then answers
 * INTERNAL without running the method, so a write is not executed by the
 * check. A server that runs its handler on raw bytes does run it once; the
 * call has ended before the run's first window, whose server count
 * (run/server-check.ts) is taken after it, so the cross-check stays exact.
 * Anything else (another status, a failed connection) lets the run go on
 * and report it.
 *
 * Only a method its proto marks idempotent (IDEMPOTENT, NO_SIDE_EFFECTS) is
 * called so: a write must never be sent by a check, however undecodable its
 * message (a server that runs its handler on raw bytes would execute it).
 * For a write the check calls a method no server has instead, which confirms
 * a gRPC server (it answers UNIMPLEMENTED) but not the write's own method:
 * nothing confirms that before the run (reflection tells the services a
 * server declares, not what it routes), so a write it lacks shows in the
 * run as UNIMPLEMENTED answers (docs/grpc.md).
 */
import type { Dispatcher } from 'undici'
import { UsageError } from '../core/errors.js'
import { frameMessage } from '../protocol/grpc-frame.js'
import type { LegacyHandler } from '../engine/forwarding-handler.js'
import { trailerLookup } from '../protocol/grpc.js'
import type { HeaderLookup } from '../protocol/grpc-status.js'

/** Field number 0 with wire type 7: invalid in every schema. */
const UNDECODABLE = frameMessage(Uint8Array.of(0x07))
const UNIMPLEMENTED = '12'
/** A method no server serves: what a write's check calls in place of the write. */
const NO_SUCH_METHOD = '/hedgebench.probe.NoSuchService/NoSuchMethod'

export interface GrpcProbeTarget {
  /** As messages name it (grpc://host:port). */
  name: string
  /** The run's dispatch options for it. */
  opts: Dispatcher.DispatchOptions
}

/** What came back to the probe call. */
interface ProbeAnswer {
  status: number
  headers: Map<string, string>
  trailer: HeaderLookup
}

/** What the check calls: the method, where the user named it, and whether its proto marks it idempotent (else it is not called). */
export interface GrpcProbeCall {
  call: string
  given: string
  idempotent: boolean
}

/**
 * Resolves when every replica answered as a gRPC server that has the method
 * (for a write: as a gRPC server, the method itself not called); rejects
 * with one line otherwise.
 */
export async function checkGrpcTargets(
  dispatcher: Pick<Dispatcher, 'dispatch'>,
  targets: readonly GrpcProbeTarget[],
  { call, given, idempotent }: GrpcProbeCall,
): Promise<void> {
  await Promise.all(
    targets.map(async ({ name, opts }) => {
      const answer = await probeCall(dispatcher, { ...opts, ...(idempotent ? {} : { path: NO_SUCH_METHOD }), body: UNDECODABLE })
      if (answer) refuseNonGrpc(answer, name, idempotent ? { call, given } : null)
    }),
  )
}

/** `method`: the method called, refused when the server lacks it; null: a method no server has (UNIMPLEMENTED expected). */
function refuseNonGrpc(answer: ProbeAnswer, name: string, method: { call: string; given: string } | null): void {
  const contentType = answer.headers.get('content-type')
  const grpcStatus = answer.headers.get('grpc-status') ?? answer.trailer('grpc-status')
  if (answer.status !== 200 || !/^application\/grpc([+;]|$)/i.test(contentType ?? '') || grpcStatus === undefined) {
    const type = contentType ? contentType.split(';')[0]!.trim() : 'without a content-type'
    throw new UsageError(`${name} answered HTTP ${answer.status} ${type}${grpcStatus === undefined ? '' : ` (grpc-status ${grpcStatus})`}: not a gRPC server`)
  }
  if (method && grpcStatus.trim() === UNIMPLEMENTED) throw new UsageError(`${name} has no method ${method.call}: check ${method.given} and the proto's package`)
}

/** One call; its answer, or null when it failed on the way (the run reports such failures itself). */
function probeCall(dispatcher: Pick<Dispatcher, 'dispatch'>, opts: Dispatcher.DispatchOptions): Promise<ProbeAnswer | null> {
  return new Promise((resolve) => {
    const answer: ProbeAnswer = { status: 0, headers: new Map(), trailer: () => undefined }
    const handler: LegacyHandler = {
      onConnect() {},
      onHeaders(status, raw) {
        answer.status = status
        for (let i = 0; i + 1 < raw.length; i += 2) answer.headers.set(String(raw[i]).toLowerCase(), String(raw[i + 1]))
        return true
      },
      onData: () => true,
      onComplete(trailers) {
        if (trailers) answer.trailer = trailerLookup(trailers)
        resolve(answer)
      },
      onError: () => resolve(null),
    }
    dispatcher.dispatch(opts, handler as unknown as Dispatcher.DispatchHandler)
  })
}
