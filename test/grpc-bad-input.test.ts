/**
 * Bad input for gRPC runs, through the CLI as a user types it: exit 2, one
 * stderr line naming the problem, no stack trace, nothing sent (the target
 * port has no listener: a check made after connecting would fail otherwise).
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { SIM_PROTO, SIM_WORK_CALL } from '../src/sim/grpc-replica.js'
import { stderrLines } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'

const dir = mkdtempSync(join(tmpdir(), 'hedgebench-grpc-bad-'))
after(() => {
  rmSync(dir, { recursive: true, force: true })
})
const badJson = join(dir, 'bad.json')
writeFileSync(badJson, '{"methodConfig": [')
const importer = join(dir, 'importer.proto')
writeFileSync(importer, 'syntax = "proto3";\npackage a;\nimport "common/types.proto";\nservice S { rpc M (common.T) returns (common.T); }\n')
const otherService = join(dir, 'other-service.json')
writeFileSync(otherService, JSON.stringify({ methodConfig: [{ name: [{ service: 'other.Svc' }], hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.01s' } }] }))
const numericDelay = join(dir, 'numeric-delay.json')
writeFileSync(
  numericDelay,
  JSON.stringify({ methodConfig: [{ name: [{ service: 'hedgebench.sim.v1.Replica' }], hedgingPolicy: { maxAttempts: 2, hedgingDelay: 0.01 } }] }),
)

// Port 9 (discard) on 127.0.0.1: nothing listens in the test environment, and nothing may be sent anyway.
const TARGET = 'grpc://127.0.0.1:9'
const REST = ['--no-save', '-n', '2', '--warmup', '0']
const OK = ['--proto', SIM_PROTO, '--call', SIM_WORK_CALL, ...REST]

const CASES: Array<{ name: string; args: string[]; message: RegExp }> = [
  { name: 'missing --call', args: [TARGET, '--proto', SIM_PROTO, '--no-save'], message: /needs --call package\.Service\/Method/ },
  {
    name: 'method not in the proto',
    args: [TARGET, '--proto', SIM_PROTO, '--call', 'hedgebench.sim.v1.Replica/Nope', ...REST],
    message: /method "Nope" is not in service hedgebench\.sim\.v1\.Replica \(methods: Work, Stats, Reset\)/,
  },
  {
    name: 'service not in the proto',
    args: [TARGET, '--proto', SIM_PROTO, '--call', 'nope.Svc/Work', ...REST],
    message: /service "nope\.Svc" is not in the schema/,
  },
  {
    name: 'service by the tail of its name',
    args: [TARGET, '--proto', SIM_PROTO, '--call', 'sim.v1.Replica/Work', ...REST],
    message:
      /service "sim\.v1\.Replica" is not in the schema by that name: its full name is hedgebench\.sim\.v1\.Replica \(--call hedgebench\.sim\.v1\.Replica\/Work\)/,
  },
  {
    name: '--service-config for another service',
    args: [TARGET, ...OK, '--hedge-by', 'grpc-js', '--service-config', otherService],
    message: /--service-config has no methodConfig for hedgebench\.sim\.v1\.Replica\/Work \(it names other\.Svc\): grpc-js would not hedge this call/,
  },
  {
    name: '--service-config hedgingDelay as a number',
    args: [TARGET, ...OK, '--hedge-by', 'grpc-js', '--service-config', numericDelay],
    message: /hedgingPolicy\.hedgingDelay 0\.01 is not a duration as gRPC writes it \(a string such as "0\.01s"\)/,
  },
  {
    name: '-d field that does not exist',
    args: [TARGET, ...OK, '-d', '{"payload": "x", "replyBytez": 3}'],
    message: /-d does not fit hedgebench\.sim\.v1\.WorkRequest: .*unknown field: "replyBytez"/,
  },
  { name: '-d not JSON', args: [TARGET, ...OK, '-d', '{payload'], message: /-d is not valid JSON/ },
  {
    name: 'unreadable proto',
    args: [TARGET, '--proto', join(dir, 'missing.proto'), '--call', SIM_WORK_CALL, ...REST],
    message: /cannot load --proto .*missing\.proto: no such file/,
  },
  {
    name: 'a missing import',
    args: [TARGET, '--proto', importer, '--call', 'a.S/M', ...REST],
    message:
      /cannot load --proto .*importer\.proto: an import is missing: no such file .*common\/types\.proto \(-i DIR adds a directory imports are looked up in\)/,
  },
  { name: 'grpc:// without a port', args: ['grpc://127.0.0.1', ...OK], message: /gRPC target without a port: "grpc:\/\/127\.0\.0\.1"/ },
  { name: 'grpc:// with a path', args: ['grpc://127.0.0.1:9/x', ...OK], message: /the method comes from --call/ },
  { name: 'grpc and http targets mixed', args: [TARGET, 'http://127.0.0.1:8/', ...OK], message: /mix of grpc:\/\/ and http URLs/ },
  {
    name: '--hedge-by grpc-js without a service config',
    args: [TARGET, ...OK, '--hedge-by', 'grpc-js'],
    message: /--hedge-by grpc-js needs --service-config FILE/,
  },
  { name: '--hedge-by unknown', args: [TARGET, ...OK, '--hedge-by', 'envoy'], message: /invalid --hedge-by "envoy" \(choose one of: hedgebench, grpc-js\)/ },
  {
    name: '--service-config not JSON',
    args: [TARGET, ...OK, '--hedge-by', 'grpc-js', '--service-config', badJson],
    message: /--service-config .*bad\.json is not valid JSON/,
  },
  { name: '--non-fatal-status not a gRPC code', args: [TARGET, ...OK, '--non-fatal-status', 'UNAVAILBLE'], message: /"UNAVAILBLE" is not a gRPC status/ },
  {
    name: '-T on a gRPC target',
    args: [TARGET, ...OK, '-T', 'text/plain'],
    message: /^hedgebench: -T: a gRPC call is always application\/grpc \(for a grpc:\/\/ target, -H and -m add metadata\)$/,
  },
  {
    name: 'a content-type header on a gRPC target',
    args: [TARGET, ...OK, '-H', 'Content-Type: text/plain'],
    message: /^hedgebench: a content-type header: a gRPC call/,
  },
  { name: '-m metadata not JSON', args: [TARGET, ...OK, '-m', 'POST'], message: /-m for a gRPC target is metadata as JSON/ },
  {
    name: '--max-recv-size not a size',
    args: [TARGET, ...OK, '--max-recv-size', '4 megs'],
    message: /invalid size for --max-recv-size: "4 megs" \(use bytes, or a number with KiB/,
  },
  {
    name: '--max-recv-size not whole bytes',
    args: [TARGET, ...OK, '--max-recv-size', '0.1KiB'],
    message: /--max-recv-size: "0\.1KiB" is not a whole number of bytes/,
  },
  {
    name: '--max-recv-size beyond a length prefix',
    args: [TARGET, ...OK, '--max-recv-size', '5GiB'],
    message: /--max-recv-size: "5GiB" is over 4294967296 bytes/,
  },
  {
    name: '--max-recv-size on an http target',
    args: ['http://127.0.0.1:9/', '--max-recv-size', '1MiB', '--no-save'],
    message: /--max-recv-size: only for gRPC targets/,
  },
  { name: '--call on an http target', args: ['http://127.0.0.1:9/', '--call', SIM_WORK_CALL, '--no-save'], message: /--call: only for gRPC targets/ },
  {
    name: 'grpc:// with user:password@',
    args: ['grpc://alice:pw@127.0.0.1:9', ...OK],
    message: /a gRPC target takes no user:password@ .*send credentials as metadata, -m/,
  },
  {
    name: '--grpc with an http target',
    args: ['-n', '10', '--grpc', 'http://127.0.0.1:9/', '--no-save'],
    message: /--grpc is for --profile's built-in replicas; give a gRPC target as grpc:\/\/host:port \(got "http:\/\/127\.0\.0\.1:9\/"\)/,
  },
  {
    name: 'an unknown template action in -d',
    args: [TARGET, ...OK, '-d', '{"payload": "{{.RequestNum}}"}'],
    message:
      /^hedgebench: -d: unknown template action \{\{\.RequestNum\}\} \(known: \{\{\.RequestNumber\}\}, \{\{\.UUID\}\}, \{\{randomInt MIN MAX\}\}, \{\{randomString N\}\}\)$/,
  },
  {
    name: 'a template action in metadata, which is sent as given',
    args: [TARGET, ...OK, '-m', '{"x-request-id": "{{.UUID}}"}'],
    message:
      /^hedgebench: metadata "x-request-id": template action \{\{\.UUID\}\} is not rendered in metadata, which is sent as given \(-d\/-D render \{\{\.RequestNumber\}\}, \{\{\.UUID\}\}, \{\{randomInt MIN MAX\}\}, \{\{randomString N\}\}\)$/,
  },
  {
    name: 'a template action in -H metadata',
    args: [TARGET, ...OK, '-H', 'x-n: {{ .RequestNumber }}'],
    message: /^hedgebench: metadata "x-n": template action \{\{ \.RequestNumber \}\} is not rendered in metadata/,
  },
]

// Every case through main() in one Node process (runMain): the check is main()'s validation;
// the launcher and the exit status as the shell sees it are tested on their own (bad-input.test.ts).
describe('bad gRPC input', () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const run = await runMain(c.args)
      const lines = stderrLines(run)
      assert.equal(run.code, 2, `exit code (stderr: ${run.stderr})`)
      assert.equal(lines.length, 1, `one line: ${JSON.stringify(lines)}`)
      assert.match(lines[0]!, c.message)
      assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace')
    })
  }
})
