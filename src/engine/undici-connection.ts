/**
 * undici's Client as a `Connection` (connection.ts): the pool's h2 over TLS,
 * where ALPN decides per socket whether it speaks h2. It starts at one
 * attempt at a time, as HTTP/1.1 must (never pipelining), and takes a
 * session's streams once a socket says h2 (`share`).
 */
import { Client, type buildConnector, type Dispatcher } from 'undici'
import type { Connection } from './connection.js'

export class UndiciConnection implements Connection {
  readonly #client: Client

  /** `onH2` is told when a socket's ALPN chose h2, before its first request is written. */
  constructor(url: string, options: Client.Options, connect: buildConnector.connector, onH2: () => void) {
    this.#client = new Client(url, {
      ...options,
      pipelining: 1,
      connect: (opts, callback) =>
        connect(opts, (...args: buildConnector.CallbackArgs) => {
          const socket = args[1] as { alpnProtocol?: string | false } | null
          if (socket?.alpnProtocol === 'h2') onH2()
          callback(...args)
        }),
    })
  }

  get destroyed(): boolean {
    return this.#client.destroyed
  }

  get closed(): boolean {
    return this.#client.closed
  }

  /** An h2 session from now on: up to `streams` attempts at once on it. */
  share(streams: number): void {
    this.#client.pipelining = streams
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return this.#client.dispatch(opts, handler)
  }

  close(): Promise<void> {
    return this.#client.close()
  }

  destroy(err?: Error | null): Promise<void> {
    return this.#client.destroy(err ?? null)
  }

  on(event: 'connect' | 'disconnect', listener: (...args: unknown[]) => void): this {
    if (event === 'connect') this.#client.on('connect', listener)
    else this.#client.on('disconnect', listener)
    return this
  }
}
