/**
 * What a CLI test file starts and must stop: CLI children, counting servers
 * and temp dirs, all closed after the file's tests (one after-hook, not a
 * copy per file).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { killAllChildren } from './cli.js'
import { startServer, type CountingServer, type ServerOptions } from './servers.js'

export interface CliSession {
  server(opts?: ServerOptions): Promise<CountingServer>
  tempDir(): Promise<string>
}

export function cliSession(prefix: string): CliSession {
  const servers: CountingServer[] = []
  const dirs: string[] = []
  after(async () => {
    killAllChildren()
    await Promise.all(servers.map((s) => s.close()))
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })))
  })
  return {
    async server(opts = {}) {
      const s = await startServer(opts)
      servers.push(s)
      return s
    },
    async tempDir() {
      const dir = await mkdtemp(join(tmpdir(), prefix))
      dirs.push(dir)
      return dir
    },
  }
}
