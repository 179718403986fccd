/**
 * run(options) from a program: what a caller can get wrong that the CLI's
 * flags cannot is refused before anything is sent, naming the option (not a
 * CLI flag, not a TypeError from inside the engine). Nothing here reaches
 * the network: every case fails its check first.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { run, type RunOptions } from '../src/index.js'
import { UsageError } from '../src/core/errors.js'

const URLS = ['http://127.0.0.1:9/']

test('option types, unknown options and malformed headers are refused by name', async () => {
  const cases: Array<[unknown, RegExp]> = [
    [undefined, /^run\(options\): pass an object, at least \{ urls:/],
    [{ urls: 'http://127.0.0.1:9/' }, /^run\(options\): urls must be an array of URLs as strings, got the string "http:\/\/127\.0\.0\.1:9\/"$/],
    [{ urls: URLS, requests: '10' }, /^run\(options\): requests must be a number, got the string "10"$/],
    [{ urls: URLS, requets: 10 }, /^run\(options\): unknown option requets \(known: urls, method, /],
    [{ urls: URLS, hedge: { delya: 20 } }, /^run\(options\): unknown option hedge\.delya \(known: delay, /],
    [{ urls: URLS, hedge: { parallel: 'yes' } }, /^run\(options\): hedge\.parallel must be a boolean, got the string "yes"$/],
    [{ urls: URLS, grpc: { cal: 'pkg.S/M' } }, /^run\(options\): unknown option grpc\.cal \(known: call, proto, /],
    [{ urls: URLS, grpc: { importPaths: 'protos' } }, /^run\(options\): grpc\.importPaths must be an array of strings, got the string "protos"$/],
    [{ urls: URLS, grpc: { call: 7 } }, /^run\(options\): grpc\.call must be a string, got number 7$/],
    [{ urls: URLS, grpc: [] }, /^run\(options\): grpc must be an object, got an array$/],
    [{ urls: URLS, headers: { 'X-A': '1' } }, /^run\(options\): headers must be an array of \[name, value\] pairs, got an object$/],
    [{ urls: URLS, headers: [['Bad Name', 'x']] }, /^run\(options\): malformed header name "Bad Name"/],
    [{ urls: URLS, headers: [['X-A', 'a\r\nX-Injected: 1']] }, /^run\(options\): header "X-A" has a control character in its value/],
    [{ urls: URLS, headers: [['X-A', 'a\x1b[2Jb']] }, /^run\(options\): header "X-A" has a control character in its value/],
    // Framing and connection headers are the client's: every request would fail on the client (counted as the target's errors).
    [{ urls: URLS, headers: [['Transfer-Encoding', 'chunked']] }, /^run\(options\): header "Transfer-Encoding" is set by hedgebench itself/],
    [{ urls: URLS, headers: [['Expect', '100-continue']] }, /^run\(options\): header "Expect" is set by hedgebench itself/],
    [{ urls: URLS, headers: [['connection', 'Upgrade']] }, /^run\(options\): header "Connection: Upgrade" is not supported \(only "close" or "keep-alive"/],
    [{ urls: URLS, headers: [['TE', 'gzip']] }, /^run\(options\): header "TE: gzip" is not supported \(only "trailers"/],
    [{ urls: URLS, headers: [['HTTP2-Settings', 'AAMAAABkAAQAAP__']] }, /^run\(options\): header "HTTP2-Settings" is set by hedgebench itself/],
    [{ urls: URLS, method: 'CONNECT' }, /^-m CONNECT is not supported/],
    [{ urls: URLS, body: 'text' }, /^run\(options\): body must be a Buffer, got the string "text"$/],
    // A time a Node timer cannot wait (above 2^31-1 ms) fires at once: refused as the flags' durations are.
    [{ urls: URLS, timeoutMs: 2 ** 31 }, /^-t 2147483648 ms is too long: at most 596h/],
    [{ urls: URLS, durationMs: 2 ** 31 }, /^-z 2147483648 ms is too long: at most 596h/],
    [{ urls: URLS, hedge: { deadlineMs: 2 ** 31 } }, /^--deadline 2147483648 ms is too long: at most 596h/],
    [{ urls: URLS, hedge: { delay: 2 ** 31 } }, /^--hedge-delay 2147483648 ms is too long: at most 596h/],
    [{ urls: URLS, hedge: { delayMaxMs: 2 ** 31 } }, /^--delay-max 2147483648 ms is too long: at most 596h/],
  ]
  for (const [options, message] of cases) {
    await assert.rejects(run(options as RunOptions), (err: Error) => err instanceof UsageError && message.test(err.message), `${JSON.stringify(options)}`)
  }
})
