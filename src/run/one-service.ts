/**
 * The replicas of a run are copies of one service: a hedge sends the same
 * request to another of them. URLs that differ in path or query (`/a` and
 * `/b`) are different requests, and a hedge of one to the other would
 * answer another question: refused, never measured silently. The scheme may
 * differ: one service reached over TLS at one replica and in clear at
 * another is still one service (what each spoke is kept per replica,
 * results/wire-protocol.ts).
 */
import { UsageError } from '../core/errors.js'
import { redactUrl } from '../core/redact.js'
import { isGrpcUrl } from '../core/target-url.js'

/**
 * Called once every URL has parsed; the first URL is the one the others are
 * held to. gRPC beside HTTP is left to resolveGrpc, which names that mix.
 */
export function checkOneService(urls: readonly string[]): void {
  const [first, ...rest] = urls.map((raw) => ({ raw, url: new URL(raw) }))
  if (first === undefined) return
  for (const other of rest) {
    if (isGrpcUrl(other.raw) !== isGrpcUrl(first.raw)) continue
    const part = path(other.url) !== path(first.url) ? 'path' : other.url.search !== first.url.search ? 'query' : null
    if (part === null) continue
    throw new UsageError(
      `replica URLs differ in ${part}: "${redactUrl(first.raw)}" and "${redactUrl(other.raw)}" (the replicas of one service differ only in host, port and scheme)`,
    )
  }
}

/** grpc:// is not a special scheme for WHATWG URL: `grpc://h:1` has an empty path where `http://h:1` has "/". */
const path = (url: URL): string => url.pathname || '/'
