/**
 * The protocol seam: how one request is framed on the wire and how its
 * answer is classified, per protocol. The engine (hedged-request.ts,
 * attempt.ts, connection-pool.ts) and the run (run.ts, lane.ts) only talk
 * to a `Protocol`; nothing outside this folder branches on which one it is.
 *
 * How a protocol plugs in (http.ts and grpc.ts are the two there are):
 *   1. Write `src/protocol/NAME.ts` exporting a `Protocol` value (or a
 *      function returning one from its settings). Implement:
 *      - `transport`: which connections it needs (HTTP/1.1, h2 over TLS
 *        with ALPN, or h2c with prior knowledge). On h2 attempts share a
 *        session (a cancel resets a stream); on HTTP/1.1 each needs a
 *        connection of its own (a cancel closes it). The pool
 *        (engine/connection-pool.ts) decides by what the socket really
 *        speaks, and counts what cancels cost either way.
 *      - `requestOptions`: undici dispatch options for one origin, built
 *        once per run (method, path, headers, body, timeouts; `idempotent`
 *        where undici would otherwise serialise requests on an h2 session).
 *      - `attemptOptions`: the copy attempt N sends (its hedge header:
 *        `x-hedge-attempt: N` for HTTP, `grpc-previous-rpc-attempts: N` for
 *        gRPC; a per-attempt deadline header such as `grpc-timeout` from the
 *        time that remains). Return `base` itself when nothing changes: the
 *        original of every request goes through here.
 *      - `classify`: success / non-fatal (hedge at once) / fatal, from the
 *        status and raw headers when they arrive (the attempt that is not
 *        non-fatal wins the race, as a gRPC client commits on headers), and
 *        `classifyEnd` for protocols whose final status is in the trailers.
 *      - `answerStatus` / `endStatus`: the status recorded, in the
 *        protocol's own numbers (HTTP 100-599, gRPC 0-16: core/status.ts
 *        tells a success from either without knowing the protocol).
 *      - `answerSignal` / `endSignal`: an explicit overload signal (429,
 *        Retry-After, RESOURCE_EXHAUSTED, grpc-retry-pushback-ms) read from
 *        the headers when they arrive and from the trailers at the
 *        attempt's end, for the saturation gate, which reads no header itself.
 *      - `strained`: whether a recorded status shows the replica failing or
 *        under strain (HTTP 5xx; gRPC UNAVAILABLE, DEADLINE_EXCEEDED, …),
 *        for the saturation gate's error rate.
 *      - `failureText`: the words a failed answer came with (grpc-message),
 *        bounded, for the error breakdown.
 *      - `bodyReader`: a reader of one answer's body as it arrives, for a
 *        protocol that refuses an answer by what its body starts with (gRPC:
 *        a length prefix over --max-recv-size, a compressed message without
 *        grpc-encoding); null when nothing in the body is judged (HTTP), so
 *        the engine reads no byte of it.
 *      - `statusLabel`: how a status is shown in reports (`200`, `UNAVAILABLE`).
 *      - `errorKind`: the name a transport failure is counted under (HTTP:
 *        ECONNREFUSED; gRPC: `UNAVAILABLE: connection refused`).
 *   2. Choose it in `run/run.ts` (`protocolFor`) from the target URL's scheme.
 * The hedging policy's `nonFatal` set and every status the engine records
 * hold the protocol's own status numbers (HTTP codes, gRPC codes).
 */
import type { Dispatcher } from 'undici'
import type { OverloadSignal } from '../hedging/saturation-gate.js'

/** What an answer means for the race: win it, trigger the next hedge, or end the request as a failure. */
export type AnswerClass = 'success' | 'non-fatal' | 'fatal'

/** The connections a protocol needs. */
export interface Transport {
  /** Speak HTTP/2: with ALPN over TLS, with prior knowledge (h2c) over cleartext. */
  readonly http2: boolean
}

/**
 * Reads one answer's body, chunk by chunk, as it arrives. `read` returns the
 * error that ends the attempt at once (its stream reset, counted under the
 * error's `code`), or null to read on.
 */
export interface BodyReader {
  read(chunk: Buffer): Error | null
}

/** A run's request, independent of protocol: what the user asked for. */
export interface RequestSpec {
  /** Method as given (HTTP) or the protocol's fixed one. */
  readonly method: string
  /** Extra headers (metadata), flat: [name, value, name, value, ...]. */
  readonly headers: readonly string[]
  readonly body: Buffer | null
  /** Per-attempt timeout (-t), ms: undici's header and body timeouts. */
  readonly timeoutMs: number
  readonly keepAlive: boolean
  /** Repeating this request is allowed (idempotent method, idempotency key, or --unsafe-hedge). */
  readonly repeatable: boolean
}

export interface Protocol {
  /** As shown in reports: 'HTTP/1.1', 'HTTP/2', 'gRPC'. */
  readonly name: string
  readonly transport: Transport
  /** Dispatch options for one target URL, built once per run. */
  requestOptions(url: URL, spec: RequestSpec): Dispatcher.DispatchOptions
  /**
   * The options attempt `index` (0 = the original) sends to `origin`.
   * `hedgeHeader`: the header naming the attempt (null = none);
   * `remainingMs`: time left before the request's deadline (null = none).
   */
  attemptOptions(
    base: Dispatcher.DispatchOptions,
    index: number,
    origin: string,
    hedgeHeader: string | null,
    remainingMs: number | null,
  ): Dispatcher.DispatchOptions
  /** classify and answerStatus read the raw headers (not only the status): an HTTP/1.1 connection then hands them over. */
  readonly readsHeaders: boolean
  /** An answer's class when its headers arrive. */
  classify(status: number, rawHeaders: Buffer[], nonFatal: ReadonlySet<number>): AnswerClass
  /**
   * The status the engine records when an answer's headers arrive (HTTP: the
   * status; gRPC: grpc-status of a trailers-only answer, else provisional).
   */
  answerStatus(status: number, rawHeaders: Buffer[]): number
  /** The final status once the answer ended: `headerStatus` unless the trailers say otherwise (gRPC). */
  endStatus(headerStatus: number, trailers: unknown): number
  /** An overload signal in an answer's headers (429 + Retry-After, a trailers-only RESOURCE_EXHAUSTED), or null. */
  answerSignal(status: number, rawHeaders: Buffer[]): OverloadSignal | null
  /** An overload signal in an attempt's trailers, at its end (gRPC status and pushback), or null. */
  endSignal(trailers: unknown): OverloadSignal | null
  /** A recorded status (answerStatus / endStatus) shows the replica failing or under strain: the saturation gate's error rate counts it. */
  strained(status: number): boolean
  /** What a failed answer's server said with its status, from the headers (a trailers-only answer) or the trailers, as reports show it (`UNAVAILABLE: no backend`); null when it said nothing. */
  failureText(rawHeaders: Buffer[] | null, trailers: unknown): string | null
  /** A reader for the body of an answer with this status and these raw headers, or null when its body is not judged. */
  bodyReader(status: number, rawHeaders: Buffer[]): BodyReader | null
  /** Report label for a status. */
  statusLabel(status: number): string
  /** The kind a transport failure is counted under in every error table and the per-request log. */
  errorKind(err: Error): string
}
