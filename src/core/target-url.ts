/**
 * The origin a target URL's connections go to. grpc:// and grpcs:// are not
 * "special" schemes for WHATWG URL (their `origin` is "null"): a gRPC target
 * is HTTP/2 cleartext or TLS to host:port, so its origin is written as the
 * http:// or https:// one, which is what the connection pool dials.
 */
const TRANSPORT_SCHEME: Record<string, string> = { 'grpc:': 'http:', 'grpcs:': 'https:' }

export function transportOrigin(raw: string): string {
  const url = new URL(raw)
  const scheme = TRANSPORT_SCHEME[url.protocol]
  return scheme === undefined ? url.origin : `${scheme}//${url.host}`
}

/** A gRPC target (grpc:// or grpcs://). */
export function isGrpcUrl(raw: string): boolean {
  return /^grpcs?:\/\//i.test(raw)
}

/** A target's origin as the user wrote its scheme (grpc://host:port, not the http:// one dialled): how messages name it. */
export function shownOrigin(raw: string): string {
  const url = new URL(raw)
  return TRANSPORT_SCHEME[url.protocol] === undefined ? url.origin : `${url.protocol}//${url.host}`
}
