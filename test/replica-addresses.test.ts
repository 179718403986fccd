/**
 * Replicas that are one server: a single URL, or two names that reach one
 * address (127.0.0.1 and localhost), cannot show what hedging across
 * independent replicas buys, and the report says so; distinct servers give
 * no such warning. Over HTTP/2 the one-URL warning says hedges share the
 * connection.
 */
import { after, test } from 'node:test'
import { createServer as createH2Server } from 'node:http2'
import type { AddressInfo } from 'node:net'
import assert from 'node:assert/strict'
import { run } from '../src/run/run.js'
import { sameAddressWarnings } from '../src/run/same-address.js'
import { startServer, type CountingServer } from './helpers/servers.js'

const servers: CountingServer[] = []
after(() => Promise.all(servers.map((s) => s.close())))

async function server(): Promise<CountingServer> {
  const s = await startServer({ delayMs: 1 })
  servers.push(s)
  return s
}

const hedged = (urls: string[]) => run({ urls, mode: 'hedged', requests: 20, concurrency: 2, warmup: 0, seed: 9, hedge: { delay: 50 } })
const independence = (warnings: string[]) => warnings.filter((w) => w.includes('replica independence is not guaranteed'))

test('127.0.0.1 and localhost on one port: the run warns that both names reach one address', async () => {
  const s = await server()
  const port = new URL(s.url).port
  const result = await hedged([`http://127.0.0.1:${port}/`, `http://localhost:${port}/`])
  assert.deepEqual(independence(result.warnings), [
    `http://127.0.0.1:${port} and http://localhost:${port} reach the same address (127.0.0.1:${port}): unless a proxy there routes by host name, their hedges go to the same server, so replica independence is not guaranteed`,
  ])
})

test('two servers: no warning; one URL: the one-origin warning', async () => {
  const [a, b] = [await server(), await server()]
  assert.deepEqual(independence((await hedged([a.url, b.url])).warnings), [])
  assert.deepEqual(independence((await hedged([a.url])).warnings), [
    'one URL: hedges go to the same origin on a separate connection, so replica independence is not guaranteed',
  ])
})

test('one URL over HTTP/2: the warning says hedges are streams on its connection, not connections of their own', async (t) => {
  const h2 = createH2Server((_req, res) => res.end('ok'))
  await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve))
  t.after(() => h2.close())
  const url = `http://127.0.0.1:${(h2.address() as AddressInfo).port}/`
  const result = await run({ urls: [url], http2: true, mode: 'hedged', requests: 20, concurrency: 2, warmup: 0, seed: 9, hedge: { delay: 50 } })
  assert.deepEqual(independence(result.warnings), [
    'one URL: hedges go to the same origin as another stream on its HTTP/2 connection, so replica independence is not guaranteed',
  ])
})

test('same-address groups: each group once, IPv6 addresses as the preflight writes them', () => {
  assert.deepEqual(
    sameAddressWarnings(['a', 'b', 'c'], ['[::1]:80', '10.0.0.1:80', '[::1]:80']).map((w) => w.slice(0, w.indexOf(':', w.indexOf(')')))),
    ['a and c reach the same address ([::1]:80)'],
  )
  assert.deepEqual(sameAddressWarnings(['a', 'b'], ['10.0.0.1:80', '10.0.0.1:81']), [])
})
