/**
 * TLS flags as ghz and grpcurl spell them, for https:// and grpcs://:
 * --cacert, --cert/--key (a client certificate, mTLS), --cname (the name
 * the server's certificate is checked against) and --authority (the
 * :authority, or Host, the requests carry; also the certificate's name
 * when --cname is not given, as grpcurl's -authority).
 */
import { readFileSync } from 'node:fs'
import type { Argv } from 'yargs'
import { UsageError } from '../core/errors.js'
import { checkHeader } from '../core/header-parse.js'
import type { RunOptions, TlsRunOptions } from '../run/run-options.js'

export interface TlsFlags {
  cacert?: string
  cert?: string
  key?: string
  cname?: string
  authority?: string
}

export function tlsFlags(y: Argv): Argv {
  return y
    .option('cacert', { type: 'string', describe: "PEM file of the CAs to trust for https:// and grpcs:// (instead of the system's)", group: 'TLS:' })
    .option('cert', { type: 'string', describe: 'PEM file of a client certificate, for servers that require one (mTLS; with --key)', group: 'TLS:' })
    .option('key', { type: 'string', describe: "PEM file of the client certificate's private key", group: 'TLS:' })
    .option('cname', { type: 'string', describe: "the name the server's certificate must carry (and SNI), instead of the URL's host", group: 'TLS:' })
    .option('authority', {
      type: 'string',
      describe: "the :authority (Host) every request carries, instead of the URL's host:port; also the certificate's name unless --cname",
      group: 'TLS:',
    })
}

/** Sets `o.tls` from the flags (the files read here: a missing one is one line) and --authority as the Host header. */
export function applyTlsFlags(o: RunOptions, f: TlsFlags): void {
  const tls: TlsRunOptions = {}
  if (f.cacert !== undefined) tls.ca = readPem(f.cacert, '--cacert')
  if (f.cert !== undefined) tls.cert = readPem(f.cert, '--cert')
  if (f.key !== undefined) tls.key = readPem(f.key, '--key')
  const tlsTarget = o.urls.some((u) => /^(https|grpcs):/i.test(u))
  const name = f.cname ?? (tlsTarget ? authorityHost(f.authority) : undefined)
  if (name !== undefined) tls.servername = name
  if (Object.keys(tls).length > 0) o.tls = tls
  if (f.authority === undefined) return
  if (o.headers?.some(([n]) => n.toLowerCase() === 'host')) throw new UsageError('give the authority with --authority or -H "Host: ...", not both')
  o.headers = [...(o.headers ?? []), checkHeader('host', f.authority)]
}

/** The host of an authority (without its port): the name a certificate carries. An IP address is no server name. */
function authorityHost(authority: string | undefined): string | undefined {
  if (authority === undefined) return undefined
  const host = authority.replace(/:\d+$/, '')
  return /^[\d.]+$|^\[.*\]$/.test(host) ? undefined : host
}

function readPem(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read ${flag} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
}
