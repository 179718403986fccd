/**
 * Credentials never leave the process: every output of a run (stdout as
 * text, JSON and CSV; the saved JSON and CSV; the per-request CSV; the HTML
 * report; stderr), and of report/compare on the saved file, is searched for
 * each secret value. The target still receives them.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import type { CliRun } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { startServer, type CountingServer } from './helpers/servers.js'
import { withUrlCredentials } from '../src/run/url-credentials.js'
import { UsageError } from '../src/core/errors.js'

const SECRETS = {
  authorization: 'Bearer s3cr3t-token',
  cookie: 'session=c00kie-v4lue',
  'x-api-key': 'k3y-4pi-v4lue',
  'proxy-authorization': 'Basic pr0xy-cr3d',
  'x-custom': 'cust0m-s3cret',
}
const PASSWORD = 'p4ssw0rd'
/** Each secret, and the distinctive part of it, must appear nowhere. */
const NEEDLES = ['s3cr3t-token', 'c00kie-v4lue', 'k3y-4pi-v4lue', 'pr0xy-cr3d', 'cust0m-s3cret', PASSWORD]

const HEADER_ARGS = [
  '-H',
  `Authorization: ${SECRETS.authorization}`,
  '-H',
  `Cookie: ${SECRETS.cookie}`,
  '-H',
  `X-Api-Key: ${SECRETS['x-api-key']}`,
  '-H',
  `Proxy-Authorization: ${SECRETS['proxy-authorization']}`,
  '-H',
  `X-Custom: ${SECRETS['x-custom']}`,
  '--redact',
  'X-Custom',
]

let server: CountingServer
let dir: string

before(async () => {
  server = await startServer({ record: Object.keys(SECRETS), body: 'ok\n' })
  dir = await mkdtemp(join(tmpdir(), 'hedgebench-cred-'))
})

after(async () => {
  await server.close()
  await rm(dir, { recursive: true, force: true })
})

function assertClean(what: string, text: string): void {
  for (const needle of NEEDLES)
    assert.ok(
      !text.includes(needle),
      `${what} contains the secret "${needle}":\n${text.slice(Math.max(0, text.indexOf(needle) - 200), text.indexOf(needle) + 200)}`,
    )
}

function assertRunClean(what: string, run: CliRun): void {
  assert.equal(run.code, 0, `${what}: ${run.stderr}`)
  assertClean(`${what} stdout`, run.stdout)
  assertClean(`${what} stderr`, run.stderr)
}

test('no secret header value or URL password appears in any output', async () => {
  const url = server.url.replace('http://', `http://alice:${PASSWORD}@`)
  const outputs: string[] = []
  for (const format of ['text', 'json', 'csv']) {
    const out = join(dir, format)
    await mkdir(out)
    const run = await runMain(
      [
        url,
        ...HEADER_ARGS,
        '-n',
        '6',
        '-c',
        '2',
        '--warmup',
        '2',
        '--hedge-delay',
        '5ms',
        '-o',
        format,
        '--out-dir',
        join(out, 'results'),
        '--csv-requests',
        join(out, 'requests.csv'),
        '--html',
        join(out, 'report.html'),
        '--label',
        `cred-${format}`,
      ],
      { cwd: dir },
    )
    assertRunClean(`run -o ${format}`, run)
    assert.ok(run.stdout.length > 0)
    outputs.push(out)
  }
  if (/"alice/.test(await readFile(join(dir, 'json', 'requests.csv'), 'utf8'))) assert.fail('unexpected user in the CSV')

  // Every file written, in every format.
  let files = 0
  for (const out of outputs) {
    for (const name of await readdir(out, { recursive: true })) {
      const path = join(out, name)
      if (!/\.(json|csv|html)$/.test(path)) continue
      files++
      assertClean(path, await readFile(path, 'utf8'))
    }
  }
  assert.equal(files, 3 * 4, 'saved JSON + CSV, per-request CSV and HTML for each run')

  // The saved JSON says the values were redacted, and that the user is kept.
  const savedDir = join(dir, 'json', 'results')
  const savedJson = join(savedDir, (await readdir(savedDir)).find((f) => f.endsWith('.json'))!)
  const saved = await readFile(savedJson, 'utf8')
  assert.match(saved, /"Authorization": "\*\*\*"/)
  assert.match(saved, /"X-Custom": "\*\*\*"/)
  assert.match(saved, /http:\/\/\*\*\*@127/)

  // Re-rendering a saved run and comparing two runs leak nothing either
  // (these only read the saved file: run at once).
  const html = join(dir, 'compare.html')
  const rerenders: Array<[string, string[]]> = [
    ...['text', 'json', 'csv'].flatMap(
      (format): Array<[string, string[]]> => [
        [`report -o ${format}`, ['report', savedJson, '-o', format]],
        [`compare -o ${format}`, ['compare', savedJson, savedJson, '-o', format]],
      ],
    ),
    ['compare --html', ['compare', savedJson, '--html', html]],
  ]
  const rendered = await Promise.all(rerenders.map(([, args]) => runMain(args, { cwd: dir })))
  rerenders.forEach(([what], i) => assertRunClean(what, rendered[i]!))
  assertClean('compare HTML', await readFile(html, 'utf8'))

  // The target did receive the real values.
  assert.ok(server.seen.length > 0)
  for (const seen of server.seen) assert.deepEqual(seen, SECRETS)
})

test('error messages about a URL never show its password', async () => {
  for (const bad of [`http://alice:${PASSWORD}@`, `ftp://alice:${PASSWORD}@127.0.0.1/`, `http://alice:${PASSWORD}@127.0.0.1:1/`]) {
    const run = await runMain([bad, '-n', '1', '--no-save'], { cwd: dir })
    assert.ok(run.code === 1 || run.code === 2, `${bad}: ${run.code} ${run.stderr}`)
    assertClean(`stderr for ${bad}`, run.stderr)
  }
})

test('error messages about a header never show a secret value', async () => {
  const run = await runMain([server.url, '-H', `Authorization Bearer s3cr3t-token`, '--no-save'], { cwd: dir })
  assert.equal(run.code, 2)
  assertClean('stderr for a malformed Authorization header', run.stderr)
})

test("a URL's user:password@ is sent as Basic authorization, as hey and curl send it, and never shown", async () => {
  const basic = await startServer({ record: ['authorization'], body: 'ok\n' })
  try {
    // Percent-encoded in the URL ("p@ss:w0rd" would not parse), decoded before it is sent.
    const url = basic.url.replace('http://', `http://alice:${PASSWORD}%40x@`)
    const run = await runMain([url, '-n', '3', '-c', '1', '--warmup', '0', '--mode', 'plain', '-o', 'json', '--no-save'], { cwd: dir })
    assertRunClean('URL credentials', run)
    assert.ok(!run.stdout.includes(Buffer.from(`alice:${PASSWORD}@x`).toString('base64')), 'the encoded credentials are not shown either')
    assert.deepEqual(new Set(basic.seen.map((s) => s.authorization)), new Set([`Basic ${Buffer.from(`alice:${PASSWORD}@x`).toString('base64')}`]))
    assert.equal(basic.seen.length, 3)
    // An Authorization given with -H wins, as in hey and curl.
    basic.seen.length = 0
    const explicit = await runMain(
      [url, '-H', `Authorization: ${SECRETS.authorization}`, '-n', '2', '-c', '1', '--warmup', '0', '--mode', 'plain', '--no-save'],
      { cwd: dir },
    )
    assert.equal(explicit.code, 0, explicit.stderr)
    assert.deepEqual(
      basic.seen.map((s) => s.authorization),
      [SECRETS.authorization, SECRETS.authorization],
    )
    // Replicas must agree: every copy of a request carries the same headers.
    const other = await startServer()
    try {
      const mixed = await runMain([url, other.url, '-n', '2', '--no-save'], { cwd: dir })
      assert.equal(mixed.code, 2)
      assert.match(mixed.stderr, /^hedgebench: the URLs carry different credentials/)
      assertClean('stderr for mixed credentials', mixed.stderr)
      assert.equal(other.received, 0)
    } finally {
      await other.close()
    }
  } finally {
    await basic.close()
  }
})

test('URL credentials as a header: decoded, refused when malformed or on grpc://, left alone when absent or overridden', () => {
  const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`
  assert.deepEqual(withUrlCredentials(['http://a%3Ab:p%25w@h:1/', 'http://a%3Ab:p%25w@h:2/'], []), [['authorization', basic('a:b:p%w')]])
  assert.deepEqual(withUrlCredentials(['http://h:1/'], [['x', 'y']]), [['x', 'y']])
  assert.deepEqual(withUrlCredentials(['http://u:p@h:1/'], [['Authorization', 'Bearer t']]), [['Authorization', 'Bearer t']])
  assert.throws(
    () => withUrlCredentials(['http://u:p%zz@h:1/'], []),
    (e: Error) => e instanceof UsageError && /malformed %-escape/.test(e.message) && !e.message.includes('p%zz'),
  )
  assert.throws(
    () => withUrlCredentials(['grpc://u:p@h:1'], []),
    (e: Error) => e instanceof UsageError && /gRPC target takes no user:password@/.test(e.message),
  )
  assert.throws(() => withUrlCredentials(['http://u:p@h:1/', 'http://h:2/'], []), /different credentials/)
})

/**
 * A small run with every output on (stdout, stderr, --frames, the saved JSON
 * and CSV, --csv-requests, --html): each as [where, text]. Files are 0600.
 */
async function everyOutput(out: string, args: string[]): Promise<{ run: CliRun; texts: Array<[string, string]> }> {
  await mkdir(out)
  const run = await runMain(
    [
      ...args,
      '-n',
      '4',
      '-c',
      '1',
      '--warmup',
      '0',
      '--mode',
      'plain',
      '--frames',
      '--out-dir',
      join(out, 'results'),
      '--csv-requests',
      join(out, 'requests.csv'),
      '--html',
      join(out, 'report.html'),
    ],
    { cwd: dir, timeoutMs: 60_000 },
  )
  assert.equal(run.code, 0, run.stderr)
  // --frames carry the result's JSON gzipped: read it as merge --from-logs would.
  const frames = run.stdout
    .split('\n')
    .filter((l) => l.startsWith('HBFRAME1 '))
    .map((l) => l.split(' ')[6]!)
    .join('')
  assert.ok(frames.length > 0, 'frames printed')
  const texts: Array<[string, string]> = [
    ['stdout', run.stdout],
    ['stderr', run.stderr],
    ['--frames', gunzipSync(Buffer.from(frames, 'base64')).toString('utf8')],
  ]
  for (const name of await readdir(out, { recursive: true })) {
    const path = join(out, name)
    if (!/\.(json|csv|html)$/.test(path)) continue
    texts.push([path, await readFile(path, 'utf8')])
    assert.equal((await stat(path)).mode & 0o777, 0o600, `${path} is for its owner only`)
  }
  return { run, texts }
}

test('query tokens, a token as the user name, a URL with spaces around and the common token headers appear in no output; files are 0600', async () => {
  const needles = ['qu3ry-t0ken', 'us3r-t0ken', 'x-auth-v4lue', 'metad4ta-t0ken']
  const out = join(dir, 'tokens')
  const url = ` ${server.url.replace('http://', 'http://us3r-t0ken@')}?id=1&access_token=qu3ry-t0ken `
  const { run, texts } = await everyOutput(out, [url, '-H', 'X-Auth-Token: x-auth-v4lue', '-H', 'x-token: metad4ta-t0ken'])
  assert.equal(texts.length, 3 + 4)
  for (const [what, text] of texts) for (const needle of needles) assert.ok(!text.includes(needle), `${what} contains "${needle}"`)
  assert.match(run.stdout, /access_token=\*\*\*/)
  // The invalid-URL error too.
  const bad = await runMain(['http://us3r-t0ken@127.0.0.1:99999/?token=qu3ry-t0ken', '--no-save'], { cwd: dir, timeoutMs: 60_000 })
  assert.equal(bad.code, 2)
  for (const needle of needles) assert.ok(!bad.stderr.includes(needle), bad.stderr)
})

test('names that look like credentials anywhere in them (X-Authorization, Authentication, X-Access-Key, ?pw=) appear in no output; --show-secret keeps one knowingly', async () => {
  const secrets = { 'X-Authorization': 'xauth-v4lue', Authentication: 'authn-v4lue', 'X-Access-Key': 'acc3ss-k3y' }
  const headers = Object.entries(secrets).flatMap(([name, value]) => ['-H', `${name}: ${value}`])
  const url = `${server.url}?pw=pw-v4lue&page=2`
  const needles = [...Object.values(secrets), 'pw-v4lue']
  const hidden = await everyOutput(join(dir, 'pattern'), [url, ...headers])
  assert.equal(hidden.texts.length, 3 + 4)
  for (const [what, text] of hidden.texts) for (const needle of needles) assert.ok(!text.includes(needle), `${what} contains "${needle}"`)
  assert.match(hidden.run.stdout, /\?pw=\*\*\*&page=2/)

  const shown = await everyOutput(join(dir, 'shown'), [url, ...headers, '--show-secret', 'x-access-key', '--show-secret', 'PW'])
  const text = (where: RegExp): string =>
    shown.texts
      .filter(([what]) => where.test(what))
      .map(([, t]) => t)
      .join('\n')
  for (const [what, t] of shown.texts) for (const needle of ['xauth-v4lue', 'authn-v4lue']) assert.ok(!t.includes(needle), `${what} contains "${needle}"`)
  const json = text(/results\/.*\.json$/)
  assert.match(json, /"X-Access-Key": "acc3ss-k3y"/)
  assert.match(json, /"showSecrets": \[\s*"x-access-key",\s*"PW"\s*\]/)
  assert.match(json, /"X-Authorization": "\*\*\*"/)
  for (const where of [/^stdout$/, /^--frames$/, /results\/.*\.json$/, /results\/.*\.csv$/, /report\.html$/])
    assert.match(text(where), /\?pw=pw-v4lue(&|&amp;)page=2/, String(where))
  assert.match(text(/^--frames$/), /"X-Access-Key": "acc3ss-k3y"/)
})
