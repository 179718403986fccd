/**
 * A fixed-delay HTTP server in a CHILD process, so its timers never share an
 * event loop with the client being measured. `spawnFixedDelayServer(ms)`
 * starts `node fixed-delay-server.js MS` (this very file), which listens on
 * 127.0.0.1 port 0, prints its URL and serves until SIGTERM or until its
 * stdin closes (the parent died). Every wait is bounded.
 */
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createInterface } from 'node:readline'
import { fileURLToPath, pathToFileURL } from 'node:url'

const SCRIPT = fileURLToPath(import.meta.url)

export interface FixedDelayServer {
  url: string
  close(): Promise<void>
}

export function spawnFixedDelayServer(delayMs: number, timeoutMs = 10_000): Promise<FixedDelayServer> {
  const child = spawn(process.execPath, [SCRIPT, String(delayMs)], { stdio: ['pipe', 'pipe', 'inherit'] })
  const close = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((r) => child.once('exit', () => r()))
    child.kill('SIGTERM')
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), 5000)))
    if ((await Promise.race([exited, late])) === 'late') {
      child.kill('SIGKILL')
      await exited
    }
    clearTimeout(timer)
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void close()
      reject(new Error(`fixed-delay server did not start within ${timeoutMs} ms`))
    }, timeoutMs)
    child.once('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    const onExit = (code: number | null): void => {
      clearTimeout(timer)
      reject(new Error(`fixed-delay server exited (${code}) before printing its URL`))
    }
    child.once('exit', onExit)
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer)
      child.off('exit', onExit)
      child.stdout!.resume()
      resolve({ url: line.trim(), close })
    })
  })
}

function serve(delayMs: number): void {
  const server = createServer((req, res) => {
    req.resume()
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end('ok\n')
    }, delayMs)
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}/\n`)
  })
  process.on('SIGTERM', () => process.exit(0))
  process.stdin.resume()
  process.stdin.on('close', () => process.exit(0))
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) serve(Number(process.argv[2] ?? 5))
