/**
 * The smallest possible HTTP/1.1 client: one keep-alive socket, one request
 * at a time, timed from the write to the last byte of a Content-Length body.
 * It is the reference for "what does loopback plus the kernel cost on this
 * machine right now", so an accuracy test can tell the generator's overhead
 * from the machine's.
 */
import { connect } from 'node:net'

export async function rawLatenciesMs(url: string, count: number, timeoutMs = 10_000): Promise<number[]> {
  const { hostname, port, pathname } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port) })
  socket.setNoDelay(true)
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  const request = Buffer.from(`GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`)
  const latencies: number[] = []
  try {
    for (let i = 0; i < count; i++) latencies.push(await once(socket, request, timeoutMs))
  } finally {
    socket.destroy()
  }
  return latencies
}

function once(socket: import('node:net').Socket, request: Buffer, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0)
    const started = performance.now()
    const timer = setTimeout(() => finish(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs)
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk])
      const end = buffered.indexOf('\r\n\r\n')
      if (end < 0) return
      const length = Number(/content-length:\s*(\d+)/i.exec(buffered.subarray(0, end).toString('latin1'))?.[1] ?? 0)
      if (buffered.length >= end + 4 + length) finish(null)
    }
    function finish(err: Error | null): void {
      const elapsed = performance.now() - started
      clearTimeout(timer)
      socket.off('data', onData)
      if (err) reject(err)
      else resolve(elapsed)
    }
    socket.on('data', onData)
    socket.write(request)
  })
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}
