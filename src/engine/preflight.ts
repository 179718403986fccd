/**
 * Before a run: can we connect to every replica at all? A target that
 * refuses connections should fail in a second with a message naming the URL,
 * not after a whole phase of ECONNREFUSED. A TCP connect (not an HTTP
 * request) keeps the server's request counts untouched.
 */
import { connect } from 'node:net'
import { TargetUnreachableError } from '../core/errors.js'

export async function checkReachable(origins: readonly string[], timeoutMs: number): Promise<void> {
  await Promise.all(origins.map((origin) => probe(origin, timeoutMs)))
}

function probe(origin: string, timeoutMs: number): Promise<void> {
  const url = new URL(origin)
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80))
  const host = url.hostname.replace(/^\[|\]$/g, '')
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port })
    const fail = (reason: string): void => {
      socket.destroy()
      reject(new TargetUnreachableError(`cannot connect to ${origin} (${reason}): is the target running?`))
    }
    socket.setTimeout(timeoutMs, () => fail(`no answer within ${timeoutMs} ms`))
    socket.once('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message))
    socket.once('connect', () => {
      socket.destroy()
      resolve()
    })
  })
}
