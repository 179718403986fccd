/** Sizes as a user types them (`--max-recv-size 4MiB`): binary and decimal units, bare bytes, and the flag's way into the run options. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseByteSize } from '../src/core/byte-size.js'
import { flagsToOptions } from '../src/cli/run-flags.js'

test('bytes, KiB/MiB/GiB (1024) and KB/MB/GB (1000), any case, a space allowed before the unit', () => {
  const cases: Array<[string, number]> = [
    ['4194304', 4_194_304],
    ['0', 0],
    ['4MiB', 4 * 1024 ** 2],
    ['512kib', 512 * 1024],
    ['1.5 MB', 1_500_000],
    ['2GB', 2e9],
    ['4GiB', 4 * 1024 ** 3],
    ['100B', 100],
    ['.5KiB', 512],
  ]
  for (const [text, bytes] of cases) assert.equal(parseByteSize(text, '--x', 4 * 1024 ** 3), bytes, text)
})

test('what is not a whole number of bytes up to the limit is refused, naming the flag', () => {
  assert.throws(() => parseByteSize('4M', '--x', 10 ** 9), /invalid size for --x: "4M" \(use bytes, or a number with KiB/)
  assert.throws(() => parseByteSize('-1', '--x', 10 ** 9), /invalid size for --x: "-1"/)
  assert.throws(() => parseByteSize('1.1B', '--x', 10 ** 9), /"1\.1B" is not a whole number of bytes/)
  assert.throws(() => parseByteSize('2KiB', '--x', 2047), /"2KiB" is over 2047 bytes/)
})

test('--max-recv-size reaches a gRPC run as grpc.maxRecvBytes', async () => {
  const options = await flagsToOptions({ urls: ['grpc://127.0.0.1:9'], call: 'a.S/M', maxRecvSize: '16MiB' })
  assert.equal(options.grpc?.maxRecvBytes, 16 * 1024 ** 2)
})
