/**
 * TLS for https:// and grpcs:// targets, the same for every connection a
 * run opens (the pre-run probe, the pool's connector, a reflection call):
 * -k, the CAs to trust (--cacert), a client certificate for servers that
 * require one (--cert/--key, mTLS), and the name the server's certificate
 * is checked against and sent as SNI when it is not the URL's host
 * (--cname, or --authority).
 */
import { isIP } from 'node:net'
import type { ConnectionOptions } from 'node:tls'

export interface TlsSettings {
  /** -k: accept any certificate. */
  insecure?: boolean
  /** PEM: the CAs the server's certificate must chain to, instead of the system's. */
  ca?: string
  /** PEM: the client certificate (chain) and its private key. */
  cert?: string
  key?: string
  /** The name the server's certificate must carry, and the SNI, instead of the URL's host. */
  servername?: string
}

/** node:tls options for a connection to `host` (a hostname or an IP, without brackets). */
export function tlsConnectOptions(s: TlsSettings, host: string): ConnectionOptions {
  // SNI is never an IP address (RFC 6066); an IP host is still checked against the certificate's IP SANs.
  const servername = s.servername ?? (isIP(host) ? undefined : host)
  return { ...tlsTrust(s), ...(servername !== undefined ? { servername } : {}) }
}

/** What a connection trusts and shows, whatever the host: -k, the CAs, the client certificate. */
export function tlsTrust(s: TlsSettings): ConnectionOptions {
  return {
    rejectUnauthorized: !s.insecure,
    ...(s.ca !== undefined ? { ca: s.ca } : {}),
    ...(s.cert !== undefined ? { cert: s.cert } : {}),
    ...(s.key !== undefined ? { key: s.key } : {}),
  }
}

/** A failed TLS handshake with `name`, in one line, with what to do about it when the code says. */
export function tlsFailure(name: string, err: NodeJS.ErrnoException): string {
  const code = err.code ?? err.message
  return `TLS handshake with ${name} failed (${code}: ${tlsReason(err.message)})${tlsHint(code)}`
}

/** An error code of a TLS connection's own (a handshake, a certificate), not of the TCP connection under it. */
export const isTlsError = (code: string): boolean => /CERT|SSL|TLS|ERR_SSL|SELF_SIGNED|HOSTNAME|ALTNAME/i.test(code)

/** OpenSSL's reason out of its error string ("...:SSL routines:ssl3_read_bytes:tlsv13 alert certificate required:../deps/..."), in one line. */
function tlsReason(message: string): string {
  return /SSL routines:[^:]*:([^:]+)/.exec(message)?.[1] ?? message.split('\n')[0]!
}

/** What to do about a failed handshake, when the code says. */
function tlsHint(code: string): string {
  if (/CERTIFICATE_REQUIRED/.test(code)) return ': the server requires a client certificate (--cert FILE --key FILE)'
  return isCertError(code) ? ': pass -k/--insecure to accept this certificate' : ''
}

const isCertError = (code: string): boolean => /CERT|SELF_SIGNED|ALTNAME|HOSTNAME|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code)
