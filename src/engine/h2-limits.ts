/**
 * What hedgebench's HTTP/2 client (h2-client.ts, hpack.ts) lets a server
 * make it hold, as nghttp2 and gRPC bound it: a server that breaks one has
 * its connection closed with a GOAWAY, and the requests on it fail under
 * the limit's own name (`h2: header list over 64 KiB`), so a report says
 * what the server did instead of counting an answer the client could not
 * afford to read. Each has a flag to raise it (cli/run-command.ts), and the
 * first two are advertised in our SETTINGS where HTTP/2 has a setting.
 */
import { H2Code, H2ProtocolError } from './h2-frames.js'

export interface H2Limits {
  /** SETTINGS_MAX_HEADER_LIST_SIZE (RFC 9113 6.5.2: name + value + 32 per field), checked on the block's octets before decoding and on the fields while decoding. */
  readonly maxHeaderList: number
  /** SETTINGS_HEADER_TABLE_SIZE: the HPACK dynamic table the server may fill (RFC 7541 4.2). */
  readonly headerTable: number
  /** CONTINUATION frames after one HEADERS (nghttp2's max_continuations, the 2024 CONTINUATION floods). */
  readonly maxContinuations: number
  /**
   * Control frames owed to the server (PING and SETTINGS ACKs, RST_STREAM
   * for its stream errors) while our writes wait to leave: nghttp2's bound
   * on its outbound queue (the 2019 PING, SETTINGS and reset floods).
   */
  readonly maxOwedFrames: number
}

/** How every kind of error named here begins (run/h2-limit-warnings.ts finds them by it). */
export const H2_LIMIT_KIND = 'h2: '

/** nghttp2's and Node's defaults (../shared/notes/h2-client.md). */
export const DEFAULT_H2_LIMITS: H2Limits = {
  maxHeaderList: 64 * 1024,
  headerTable: 4096,
  maxContinuations: 8,
  maxOwedFrames: 1000,
}

/** Octets as a person reads a limit: 64 KiB, 1 MiB, 100 octets. */
export function octets(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`
  return `${n} octets`
}

/** A server's header block (on the wire, or decoded) larger than the limit. */
export function headerListError(limit: number): H2ProtocolError {
  const kind = `${H2_LIMIT_KIND}header list over ${octets(limit)}`
  return new H2ProtocolError(`${kind} (--h2-max-header-list raises it)`, H2Code.ENHANCE_YOUR_CALM, kind)
}

export function continuationError(limit: number): H2ProtocolError {
  const kind = `${H2_LIMIT_KIND}more than ${limit} CONTINUATION frames`
  return new H2ProtocolError(`${kind} in one header block (--h2-max-continuations raises it)`, H2Code.ENHANCE_YOUR_CALM, kind)
}

/** `frame` (PING, SETTINGS, RST_STREAM): the kind of frame whose reply tipped the queue over. */
export function floodError(frame: string, limit: number): H2ProtocolError {
  const kind = `${H2_LIMIT_KIND}${frame} flood`
  return new H2ProtocolError(
    `${kind} (more than ${limit} control frames owed while the server did not read; --h2-max-owed-frames raises it)`,
    H2Code.ENHANCE_YOUR_CALM,
    kind,
  )
}

/** RFC 9113 6.9.1: a window past 2^31-1, or DATA beyond the window we gave. */
export function flowControlError(why: string): H2ProtocolError {
  return new H2ProtocolError(why, H2Code.FLOW_CONTROL_ERROR, `${H2_LIMIT_KIND}flow-control error`)
}
