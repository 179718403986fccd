import { test } from 'node:test'
import assert from 'node:assert/strict'
import { redactHeaders, redactUrl } from '../src/core/redact.js'

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
  const out = redactHeaders([['X-Tenant-Token', 's3cret'], ['X-Other', 'visible']], ['x-tenant-token'])
  assert.deepEqual(out, { 'X-Tenant-Token': '***', 'X-Other': 'visible' })
})

test('a repeated secret header stays redacted; a repeated plain header keeps both values', () => {
  const out = redactHeaders([['Cookie', 'a=s3cret'], ['Cookie', 'b=s3cret'], ['Accept', 'a/b'], ['Accept', 'c/d']])
  assert.deepEqual(out, { Cookie: '***', Accept: 'a/b, c/d' })
  assert.doesNotMatch(JSON.stringify(out), /s3cret/)
})

test('URL passwords are redacted, the rest of the URL kept as typed', () => {
  assert.equal(redactUrl('http://user:s3cret@example.com:8080/x?y=1'), 'http://user:***@example.com:8080/x?y=1')
  assert.equal(redactUrl('https://u:p%40ss@h/'), 'https://u:***@h/')
  // An unencoded "@" in the password: the authority ends at the last "@".
  assert.equal(redactUrl('http://u:pa@ss@h/path@x'), 'http://u:***@h/path@x')
  assert.equal(redactUrl('http://u:@h/'), 'http://u:***@h/')
})

test('URLs without a password are unchanged', () => {
  for (const url of ['http://127.0.0.1:8080/users/42', 'http://user@h/', 'http://h/a:b@c', 'not a url']) {
    assert.equal(redactUrl(url), url)
  }
})
