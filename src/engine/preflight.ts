/**
 * Before a run: can we connect to every replica at all? A target that
 * refuses connections should fail in a second with a message naming the URL,
 * not after a whole phase of ECONNREFUSED. A TCP connect (not an HTTP
 * request) keeps the server's request counts untouched. For https the TLS
 * handshake is part of connecting: a certificate the run would refuse on
 * every request (self-signed, wrong host, expired) fails here the same way,
 * naming the TLS error and -k.
 */
import { connect, isIP, type Socket } from 'node:net'
import { connect as connectTls } from 'node:tls'
import { TargetUnreachableError } from '../core/errors.js'

export interface PreflightOptions {
  /** -k: accept any certificate, as the run will. */
  insecure?: boolean
}

export async function checkReachable(origins: readonly string[], timeoutMs: number, options: PreflightOptions = {}): Promise<void> {
  await Promise.all(origins.map((origin) => probe(origin, timeoutMs, options)))
}

function probe(origin: string, timeoutMs: number, options: PreflightOptions): Promise<void> {
  const url = new URL(origin)
  const tls = url.protocol === 'https:'
  const port = Number(url.port || (tls ? 443 : 80))
  const host = url.hostname.replace(/^\[|\]$/g, '')
  return new Promise((resolve, reject) => {
    const socket: Socket = tls
      ? connectTls({ host, port, rejectUnauthorized: !options.insecure, ...(isIP(host) ? {} : { servername: host }) })
      : connect({ host, port })
    let connected = false
    const fail = (reason: string): void => {
      socket.destroy()
      reject(new TargetUnreachableError(reason))
    }
    socket.setTimeout(timeoutMs, () => fail(`cannot connect to ${origin} (no answer within ${timeoutMs} ms): is the target running?`))
    socket.once('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? err.message
      // The TCP connection was made: what failed is the TLS handshake (a certificate error has no 'connect' before it either, so look at the code).
      if (tls && (connected || isTlsError(code))) fail(`TLS handshake with ${origin} failed (${code}: ${err.message})${isCertError(code) ? ': pass -k/--insecure to accept this certificate' : ''}`)
      else fail(`cannot connect to ${origin} (${code}): is the target running?`)
    })
    socket.once('connect', () => (connected = true))
    socket.once(tls ? 'secureConnect' : 'connect', () => {
      socket.destroy()
      resolve()
    })
  })
}

const isTlsError = (code: string): boolean => /CERT|SSL|TLS|ERR_SSL|SELF_SIGNED|HOSTNAME|ALTNAME/i.test(code)
const isCertError = (code: string): boolean => /CERT|SELF_SIGNED|ALTNAME|HOSTNAME|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code)
