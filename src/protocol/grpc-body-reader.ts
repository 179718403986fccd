/**
 * What a gRPC client refuses in a response body before reading it, judged on
 * each message's 5-byte prefix (grpc-frame.ts) as soon as its bytes are in,
 * whatever DATA frames they came in:
 *   - a length over the receive limit (--max-recv-size, 4 MiB by default, as
 *     grpc-js's and grpc-go's `max_receive_message_length`): RESOURCE_EXHAUSTED,
 *     without waiting for a body that may never come (a 4 GB prefix would
 *     otherwise hold the call until -t);
 *   - the compressed flag on an answer whose headers name no encoding (or
 *     `identity`), or a flag that is neither 0 nor 1: INTERNAL, as grpc-js and
 *     grpc-go refuse it.
 * hedgebench decodes no response message: a compressed one under a named
 * encoding (gzip, …) is neither inflated nor refused, and the call counts by
 * its grpc-status. The limit is the length on the wire, compressed or not.
 */
import type { BodyReader } from './protocol.js'

/** grpc-js's and grpc-go's default receive limit. */
export const DEFAULT_MAX_RECV_BYTES = 4 * 1024 * 1024

/** A length prefix says at most 2^32-1: a limit of 4 GiB refuses nothing. */
export const MAX_RECV_LIMIT_BYTES = 4 * 1024 ** 3

/**
 * A response the client refused. Its `code` is the error kind reports count
 * it under: the gRPC status a gRPC client ends the call with, and why (the
 * limit is the run's, never the message's own length, so the kinds stay few).
 */
export class GrpcRefusedMessage extends Error {
  override name = 'GrpcRefusedMessage'
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/** The error kind of a message over the limit. */
export function tooLargeKind(maxBytes: number): string {
  return `RESOURCE_EXHAUSTED: received message larger than --max-recv-size (${maxBytes} bytes)`
}

/** The error kind of the compressed flag without an encoding. */
export const COMPRESSED_WITHOUT_ENCODING = 'INTERNAL: compressed message without grpc-encoding'

/** The error kind of a flag byte that is neither 0 nor 1. */
export const UNKNOWN_MESSAGE_FLAG = 'INTERNAL: message flag neither 0 nor 1'

const PREFIX_BYTES = 5

/** Reads the prefixes of one answer's messages; the message bytes between them are skipped, never copied. */
export class GrpcBodyReader implements BodyReader {
  /** Bytes of the current prefix read so far (0 while inside a message or before the first). */
  #prefixAt = 0
  #flag = 0
  #length = 0
  /** Bytes of the current message still to skip. */
  #rest = 0

  /** `encoded`: the answer's grpc-encoding names a compression (not absent, not identity). */
  constructor(
    readonly maxBytes: number,
    readonly encoded: boolean,
  ) {}

  read(chunk: Buffer): Error | null {
    let at = 0
    while (at < chunk.length) {
      if (this.#rest > 0) {
        const skip = Math.min(this.#rest, chunk.length - at)
        this.#rest -= skip
        at += skip
        continue
      }
      const byte = chunk[at++]!
      if (this.#prefixAt === 0) {
        this.#flag = byte
        this.#length = 0
      } else this.#length = this.#length * 256 + byte
      if (++this.#prefixAt < PREFIX_BYTES) continue
      this.#prefixAt = 0
      const refused = this.#judge()
      if (refused !== null) return refused
      this.#rest = this.#length
    }
    return null
  }

  /** The prefix just read, judged as grpc-go does: its flag, then its length. */
  #judge(): GrpcRefusedMessage | null {
    if (this.#flag > 1) return new GrpcRefusedMessage(UNKNOWN_MESSAGE_FLAG, `received message flag ${this.#flag} (0 or 1 expected)`)
    if (this.#flag === 1 && !this.encoded) {
      return new GrpcRefusedMessage(COMPRESSED_WITHOUT_ENCODING, 'received compressed message but no grpc-encoding (or identity) in the response headers')
    }
    if (this.#length > this.maxBytes) {
      return new GrpcRefusedMessage(tooLargeKind(this.maxBytes), `received message larger than max (${this.#length} vs. ${this.maxBytes})`)
    }
    return null
  }
}
