/**
 * TLS for https:// and grpcs:// targets, the same for every connection a
 * run opens (the pre-run probe, the pool's connector, a reflection call):
 * -k, the CAs to trust (--cacert), a client certificate for servers that
 * require one (--cert/--key, mTLS), and the name the server's certificate
 * is checked against and sent as SNI when it is not the URL's host
 * (--cname, or --authority).
 */
import { isIP } from 'node:net'
import type { ConnectionOptions, TLSSocket } from 'node:tls'

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

/** What a handshake showed beside its error, for saying what to do about it. */
export interface HandshakeSeen {
  /** The server sent a CertificateRequest: it asked for a client certificate. */
  askedForCert: boolean
  /** --cert/--key were given. */
  certGiven: boolean
}

/**
 * Whether the server asked for a client certificate: the signature
 * algorithms a client shares with the server come from its
 * CertificateRequest (OpenSSL's SSL_get_shared_sigalgs), so the list is
 * empty unless the server sent one, in TLS 1.2 and 1.3 alike, and still
 * there when the handshake then failed.
 */
export function handshakeSeen(socket: TLSSocket, s: TlsSettings): HandshakeSeen {
  let asked = false
  try {
    asked = socket.getSharedSigalgs().length > 0
  } catch {
    // A socket destroyed before its handshake began has no TLS state to ask.
  }
  return { askedForCert: asked, certGiven: s.cert !== undefined }
}

/** A failed TLS handshake with `name`, in one line, with what to do about it when the code (and what the handshake showed) says. */
export function tlsFailure(name: string, err: NodeJS.ErrnoException, seen?: HandshakeSeen): string {
  const code = err.code ?? err.message
  return `TLS handshake with ${name} failed (${code}: ${tlsReason(err.message)})${tlsHint(code, err, seen)}`
}

/** A server that asked for a client certificate, then closed the connection without an alert (or reset it). */
export function certificateRefused(name: string, seen: HandshakeSeen): string {
  return seen.certGiven
    ? `TLS handshake with ${name} failed: the server asked for a client certificate, was given the one of --cert/--key, and closed the connection${REFUSED_HINT}`
    : `TLS handshake with ${name} failed: the server asked for a client certificate, none was given, and it closed the connection${CERT_HINT}`
}

const CERT_HINT = ': the server requires a client certificate (--cert FILE --key FILE)'
const REFUSED_HINT = ': is the certificate of --cert/--key one it accepts (signed by a CA it trusts, for client authentication)?'

/** An error code of a TLS connection's own (a handshake, a certificate), not of the TCP connection under it. */
export const isTlsError = (code: string): boolean => /CERT|SSL|TLS|ERR_SSL|SELF_SIGNED|HOSTNAME|ALTNAME/i.test(code)

/** OpenSSL's reason out of its error string ("...:SSL routines:ssl3_read_bytes:tlsv13 alert certificate required:../deps/..."), in one line. */
function tlsReason(message: string): string {
  return (/SSL routines:[^:]*:([^:]+)/.exec(message)?.[1] ?? message.split('\n')[0]!).replace(/[:\s]+$/, '')
}

/** What to do about a failed handshake, when the code or the handshake says. */
function tlsHint(code: string, err: NodeJS.ErrnoException, seen?: HandshakeSeen): string {
  if (/CERTIFICATE_REQUIRED/.test(code)) return CERT_HINT
  if (isNameError(code)) {
    const names = (err as { cert?: { subjectaltname?: string } }).cert?.subjectaltname
    return `: the server's certificate is not for this name${names ? ` (it names ${names})` : ''}: pass --cname NAME with a name it carries, or -k/--insecure to accept any certificate`
  }
  if (isUnknownCa(code))
    return ": the server's certificate is not signed by a CA trusted here: pass --cacert FILE with the CA that signed it, or -k/--insecure to accept any certificate"
  // An alert (or a reset) is the server's doing, never this side's check of its certificate: after it asked for one, it is about the client's.
  if (/ALERT/.test(code) || !isTlsError(code)) {
    if (!seen?.askedForCert) return ''
    return seen.certGiven ? `: the server refused the client certificate${REFUSED_HINT}` : CERT_HINT
  }
  return isCertError(code) ? ': pass -k/--insecure to accept this certificate' : ''
}

const isNameError = (code: string): boolean => /ALTNAME|HOSTNAME/.test(code)
const isUnknownCa = (code: string): boolean =>
  /SELF_SIGNED|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|CERT_UNTRUSTED|CERT_CHAIN_TOO_LONG/.test(code)
const isCertError = (code: string): boolean => /CERT|SELF_SIGNED|ALTNAME|HOSTNAME|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code)
