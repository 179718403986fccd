/**
 * The generator's own open-file limit (`ulimit -n`) against the sockets a
 * run may hold: past it every new connection fails with EMFILE on this
 * machine, which once read as 80 % target errors. Node raises its soft
 * limit to the hard one as it starts and has no API for either, so the
 * limit is read from /proc/self/limits (Linux; elsewhere nothing is
 * checked) and raising the hard limit is left to the shell, before the run.
 */
import { readFileSync } from 'node:fs'
import type { ResolvedRun } from './resolve-options.js'
import { protocolFor } from './protocol-choice.js'

export interface FdLimit {
  soft: number
  hard: number
}

/** Descriptors Node and hedgebench hold besides the sockets: stdio, the event loop, worker threads, open files. */
const BASE_FDS = 64

/** The soft and hard open-file limits from /proc/self/limits' text ("unlimited" is Infinity), or null where there is none. */
export function readFdLimit(read: () => string = () => readFileSync('/proc/self/limits', 'utf8')): FdLimit | null {
  let text: string
  try {
    text = read()
  } catch {
    return null
  }
  const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(text)
  if (!m) return null
  const value = (s: string): number => (s === 'unlimited' ? Infinity : Number(s))
  return { soft: value(m[1]!), hard: value(m[2]!) }
}

/**
 * Sockets a run may hold at once: on HTTP/1.1 each replica's pool can grow
 * to -c connections as requests rotate over the replicas, and hedges add up
 * to -c × (attempts − 1) more; HTTP/2 and gRPC multiplex on one connection
 * per replica (--connections: that many), with room for one more.
 */
export function socketsNeeded(cfg: ResolvedRun): number {
  if (protocolFor(cfg).transport.http2) return cfg.urls.length * ((cfg.connections ?? 1) + 1)
  const hedges = cfg.mode === 'plain' ? 0 : cfg.concurrency * Math.max(0, cfg.hedge.maxAttempts - 1)
  return cfg.concurrency * cfg.urls.length + hedges
}

/** The warning when the soft limit is below what the run may need, or null. */
export function fdLimitWarning(cfg: ResolvedRun, limit: FdLimit | null = readFdLimit()): string | null {
  if (limit === null) return null
  const need = socketsNeeded(cfg) + BASE_FDS
  if (need <= limit.soft) return null
  const suggest = Math.min(limit.hard, 2 ** Math.ceil(Math.log2(need)))
  const raise =
    suggest >= need
      ? `run \`ulimit -n ${suggest}\` in the shell before hedgebench (Node cannot raise it itself)`
      : `Node already raised its soft limit to the hard limit, ${limit.hard}: raise that before the run (\`ulimit -n ${2 ** Math.ceil(Math.log2(need))}\` where allowed, limits.conf, systemd LimitNOFILE=, docker --ulimit nofile=) or lower -c`
  return `the open-file limit (ulimit -n) is ${limit.soft}, below the ~${need} descriptors -c ${cfg.concurrency} over ${cfg.urls.length} replica${cfg.urls.length === 1 ? '' : 's'} may need: connections past it fail with EMFILE on this machine (counted as the generator's failures, not the target's); ${raise}`
}
