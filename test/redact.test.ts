import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { isSecretName, redactHeaders, redactUrl, SECRET_NAME_PARTS } from '../src/core/redact.js'

test('every credential header is redacted, whatever its case', () => {
  const headers: Array<[string, string]> = [
    ['Authorization', 'Bearer s3cret'],
    ['proxy-authorization', 'Basic s3cret'],
    ['COOKIE', 'session=s3cret'],
    ['Set-Cookie', 'id=s3cret'],
    ['x-api-key', 's3cret'],
    ['Accept', 'application/json'],
  ]
  assert.deepEqual(redactHeaders(headers), {
    Authorization: '***',
    'proxy-authorization': '***',
    COOKIE: '***',
    'Set-Cookie': '***',
    'x-api-key': '***',
    Accept: 'application/json',
  })
})

test('--redact names are redacted too, case-insensitively', () => {
  const out = redactHeaders(
    [
      ['X-Tenant-Token', 's3cret'],
      ['X-Other', 'visible'],
    ],
    ['x-tenant-token'],
  )
  assert.deepEqual(out, { 'X-Tenant-Token': '***', 'X-Other': 'visible' })
})

test('a repeated secret header stays redacted; a repeated plain header keeps both values', () => {
  const out = redactHeaders([
    ['Cookie', 'a=s3cret'],
    ['Cookie', 'b=s3cret'],
    ['Accept', 'a/b'],
    ['Accept', 'c/d'],
  ])
  assert.deepEqual(out, { Cookie: '***', Accept: 'a/b, c/d' })
  assert.doesNotMatch(JSON.stringify(out), /s3cret/)
})

test("a URL's userinfo is redacted whole (a token as the user name too), the rest kept as typed", () => {
  assert.equal(redactUrl('http://user:s3cret@example.com:8080/x?y=1'), 'http://***@example.com:8080/x?y=1')
  assert.equal(redactUrl('https://u:p%40ss@h/'), 'https://***@h/')
  // An unencoded "@" in the password: the authority ends at the last "@".
  assert.equal(redactUrl('http://u:pa@ss@h/path@x'), 'http://***@h/path@x')
  assert.equal(redactUrl('http://u:@h/'), 'http://***@h/')
  assert.equal(redactUrl('https://ghp_s3cret@github.example/x'), 'https://***@github.example/x')
  assert.equal(redactUrl('grpc://tok3n@h:50051'), 'grpc://***@h:50051')
})

test('URLs are matched as the URL parser reads them: spaces around, backslashes, tabs inside', () => {
  for (const raw of [
    ' http://u:s3cret@h/',
    'http://u:s3cret@h/ ',
    '\thttp:\\\\u:s3cret@h/',
    'HTTP:/u:s3cret@h/',
    'ht\ttp://u:s3cret@h/',
    'http://h/?to\nken=s3cret',
  ]) {
    const out = redactUrl(raw)
    assert.ok(!out.includes('s3cret'), `${JSON.stringify(raw)} -> ${JSON.stringify(out)}`)
    // What the parser reads from the redacted text carries no credential either.
    const parsed = URL.canParse(out) ? new URL(out) : null
    if (parsed) assert.ok(parsed.password === '' && ['', '***'].includes(parsed.username), out)
  }
})

test('query and fragment parameters named like credentials are redacted; the others kept', () => {
  assert.equal(redactUrl('http://h/x?id=7&token=s3cret&page=2'), 'http://h/x?id=7&token=***&page=2')
  assert.equal(
    redactUrl('http://h/?access_token=a&API_KEY=b&x_token=c&apiKey=d&X-Amz-Signature=e&sig=f&code=g&password=h&passwd=i&client_secret=j&auth=k&q=keep'),
    'http://h/?access_token=***&API_KEY=***&x_token=***&apiKey=***&X-Amz-Signature=***&sig=***&code=***&password=***&passwd=***&client_secret=***&auth=***&q=keep',
  )
  assert.equal(redactUrl('http://h/cb#access_token=s3cret&state=1'), 'http://h/cb#access_token=***&state=1')
  assert.equal(redactUrl('http://h/?%74oken=s3cret'), 'http://h/?%74oken=***')
  // Not a URL (an error message's echo of bad input): still redacted.
  assert.equal(redactUrl('h:99999/x?token=s3cret'), 'h:99999/x?token=***')
})

test('URLs without credentials are unchanged', () => {
  for (const url of ['http://127.0.0.1:8080/users/42', 'http://h/a:b@c', 'not a url', 'http://h/?q=1&page=2#top', 'http://h/?email=a@b.c']) {
    assert.equal(redactUrl(url), url)
  }
})

test('the common token headers and gRPC metadata are redacted by default', () => {
  const names = [
    'X-Auth-Token',
    'x-access-token',
    'X-Amz-Security-Token',
    'Private-Token',
    'x-token',
    'X-CSRF-Token',
    'x-client-secret',
    'x-goog-api-key',
    'apikey',
    'x-token-bin',
  ]
  const out = redactHeaders([...names.map((n): [string, string] => [n, 's3cret']), ['x-request-id', 'r1'], ['Idempotency-Key', 'k1']])
  for (const n of names) assert.equal(out[n], '***', n)
  assert.equal(out['x-request-id'], 'r1')
})

test('one rule for header and parameter names: a credential word anywhere in the name, whatever its case', () => {
  const names = [
    'X-Authorization',
    'Authentication',
    'X-Access-Key',
    'Idempotency-Key',
    'x-session-id',
    'X-Sig',
    'X-Passphrase',
    'X-JWT',
    'X-User-Credential',
    'my-cookie-jar',
  ]
  const out = redactHeaders([...names.map((n): [string, string] => [n, 's3cret']), ['Accept', 'a/b'], ['x-request-id', 'r1'], ['Content-Type', 'c']])
  for (const n of names) assert.equal(out[n], '***', n)
  assert.deepEqual([out.Accept, out['x-request-id'], out['Content-Type']], ['a/b', 'r1', 'c'])
  assert.equal(
    redactUrl('http://h/?pw=a&PWD=b&userPassword=c&my_sig=d&oauth_code=e&SessionKey=f&page=2&q=x'),
    'http://h/?pw=***&PWD=***&userPassword=***&my_sig=***&oauth_code=***&SessionKey=***&page=2&q=x',
  )
  for (const part of SECRET_NAME_PARTS) {
    assert.ok(isSecretName(`x-${part.toUpperCase()}-y`), part)
    assert.equal(redactUrl(`http://h/?a${part}b=s3cret`), `http://h/?a${part}b=***`, part)
  }
})

test('--show-secret keeps the names given, case-insensitively, and only those', () => {
  const out = redactHeaders(
    [
      ['X-Access-Key', 'k1'],
      ['Authorization', 'Bearer t'],
      ['X-Tenant', 't1'],
    ],
    ['x-tenant'],
    ['x-access-key', 'X-TENANT'],
  )
  assert.deepEqual(out, { 'X-Access-Key': 'k1', Authorization: '***', 'X-Tenant': '***' }, '--redact wins over --show-secret')
  assert.equal(redactUrl('http://h/?pw=a&token=b#sig=c', ['PW', 'sig']), 'http://h/?pw=a&token=***#sig=c')
  assert.equal(redactUrl('http://u:p@h/?pw=a', ['pw']), 'http://***@h/?pw=a', 'the userinfo is never kept')
})

test('docs/reliability.md lists the words of the rule, in its order', () => {
  const docs = readFileSync(fileURLToPath(new URL('../../docs/reliability.md', import.meta.url)), 'utf8')
  const sentence = /holds anywhere in it one of\s+([\s\S]*?)\s+\(`Authorization`/.exec(docs)
  assert.ok(sentence, 'the sentence that lists them')
  assert.deepEqual(
    [...sentence[1]!.matchAll(/`([a-z]+)`/g)].map((m) => m[1]),
    [...SECRET_NAME_PARTS],
  )
})
