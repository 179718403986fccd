/**
 * gRPC request encoding: the schema (--proto with -i, --protoset), --call
 * resolution, strict ProtoJSON for -d/-D (unknown fields are errors), -B,
 * framing, status classification and grpc-timeout. Pure functions over
 * files written to a temp dir; the wire is tested in grpc-*.test.ts files.
 */
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import protobuf from 'protobufjs'
import 'protobufjs/ext/descriptor.js'
import { UsageError } from '../src/core/errors.js'
import { encodeRequestBody, encodeRequestMessage } from '../src/protocol/grpc-message.js'
import { loadGrpcMethod } from '../src/protocol/grpc-method.js'
import { frameMessage, unframeMessages } from '../src/protocol/grpc-frame.js'
import { classifyGrpcAnswer, decodeGrpcMessage, grpcCodeName, grpcTimeoutHeader, parseGrpcNonFatal, parseGrpcTimeout } from '../src/protocol/grpc-status.js'

const dir = mkdtempSync(join(tmpdir(), 'hedgebench-grpc-schema-'))
after(() => rmSync(dir, { recursive: true, force: true }))
mkdirSync(join(dir, 'include', 'shared'), { recursive: true })
writeFileSync(
  join(dir, 'include', 'shared', 'types.proto'),
  `syntax = "proto3";
package shared;
message Inner { string user_name = 1; repeated int32 ids = 2; }
enum Kind { KIND_UNSPECIFIED = 0; FAST = 1; SLOW = 2; }
`,
)
writeFileSync(
  join(dir, 'svc.proto'),
  `syntax = "proto3";
package demo.v1;
import "shared/types.proto";
import "google/protobuf/duration.proto";
message Req {
  int64 big = 1;
  bytes blob = 2;
  shared.Kind kind = 3;
  shared.Inner inner = 4;
  repeated shared.Inner list = 5;
  google.protobuf.Duration wait = 6;
  map<string, int32> tags = 7;
}
message Res { string s = 1; }
service Svc {
  rpc Call(Req) returns (Res);
  rpc Watch(Req) returns (stream Res);
}
`,
)
const proto = join(dir, 'svc.proto')
const importPaths = [join(dir, 'include')]
const method = loadGrpcMethod({ proto, importPaths }, 'demo.v1.Svc/Call')

function usageError(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof UsageError, `expected a UsageError, got ${String(err)}`)
    assert.match(err.message, pattern)
    assert.doesNotMatch(err.message, /\n/)
    return true
  })
}

/** What the message should encode to, built field by field with protobufjs's own encoder. */
function expected(fields: Record<string, unknown>): Buffer {
  const t = method.requestType
  return Buffer.from(t.encode(t.create(fields)).finish())
}

describe('schema and --call', () => {
  test('a proto with -i imports and google/protobuf types resolves its method and :path', () => {
    assert.equal(method.path, '/demo.v1.Svc/Call')
    assert.equal(method.requestType.fullName, '.demo.v1.Req')
    assert.equal(method.responseType.fullName, '.demo.v1.Res')
    assert.equal(loadGrpcMethod({ proto, importPaths }, 'demo.v1.Svc.Call').path, '/demo.v1.Svc/Call', 'ghz also accepts a dot before the method')
  })

  test('a protoset (FileDescriptorSet) gives the same method', () => {
    const root = new protobuf.Root()
    root.resolvePath = (_origin, target) => (target.startsWith('/') ? target : join(dir, 'include', target))
    root.loadSync(proto).resolveAll()
    const set = (root as unknown as { toDescriptor(s: string): protobuf.Message }).toDescriptor('proto3')
    const FileDescriptorSet =
      (protobuf as unknown as { descriptor: { FileDescriptorSet: protobuf.Type } }).descriptor?.FileDescriptorSet ??
      root.lookupType('google.protobuf.FileDescriptorSet')
    const file = join(dir, 'svc.protoset')
    writeFileSync(file, FileDescriptorSet.encode(set).finish())
    const fromSet = loadGrpcMethod({ protoset: file }, 'demo.v1.Svc/Call')
    assert.equal(fromSet.path, '/demo.v1.Svc/Call')
    const json = { big: '7', kind: 'SLOW', inner: { userName: 'a' } }
    assert.deepEqual(encodeRequestMessage(fromSet, { data: JSON.stringify(json) }), encodeRequestMessage(method, { data: JSON.stringify(json) }))
  })

  test('bad schema input is one line each', () => {
    usageError(() => loadGrpcMethod({ proto, importPaths }, undefined), /needs --call/)
    usageError(() => loadGrpcMethod({ proto, importPaths }, 'demo.v1.Svc/Nope'), /method "Nope" is not in service demo\.v1\.Svc \(methods: Call, Watch\)/)
    usageError(() => loadGrpcMethod({ proto, importPaths }, 'demo.v1.Nope/Call'), /service "demo\.v1\.Nope" is not in the schema \(services: demo\.v1\.Svc\)/)
    usageError(() => loadGrpcMethod({ proto, importPaths }, 'Call'), /--call must be package\.Service\/Method/)
    usageError(() => loadGrpcMethod({ proto, importPaths }, 'demo.v1.Svc/Watch'), /streaming method/)
    usageError(() => loadGrpcMethod({ proto: join(dir, 'missing.proto') }, 'demo.v1.Svc/Call'), /cannot load --proto .*missing\.proto/)
    usageError(() => loadGrpcMethod({ proto }, 'demo.v1.Svc/Call'), /cannot load --proto .*svc\.proto/) // its import is not found without -i
    usageError(() => loadGrpcMethod({ protoset: join(dir, 'missing.protoset') }, 'demo.v1.Svc/Call'), /cannot read --protoset .*: no such file/)
    usageError(() => loadGrpcMethod({ protoset: proto }, 'demo.v1.Svc/Call'), /cannot load --protoset/)
    usageError(() => loadGrpcMethod({}, 'demo.v1.Svc/Call'), /needs its schema/)
  })
})

describe('-d / -D / -B: the protobuf JSON mapping, strictly', () => {
  test('lowerCamel and original names, enums by name and number, int64 strings, bytes base64, Duration, maps', () => {
    const camel = { big: '9007199254740993', blob: 'aGk=', kind: 'FAST', inner: { userName: 'x', ids: [1, 2] }, wait: '1.5s', tags: { a: 1 } }
    const want = expected({
      big: { low: 1, high: 2 ** 21, unsigned: false }, // 2^53 + 1: not a double, so it must travel as a string
      blob: Buffer.from('hi'),
      kind: 1,
      inner: { userName: 'x', ids: [1, 2] },
      wait: { seconds: 1, nanos: 500_000_000 },
      tags: { a: 1 },
    })
    assert.deepEqual(Buffer.from(encodeRequestMessage(method, { data: JSON.stringify(camel) })), want)
    const original = { ...camel, kind: 1, inner: { user_name: 'x', ids: [1, 2] } }
    assert.deepEqual(Buffer.from(encodeRequestMessage(method, { data: JSON.stringify(original) })), want)
  })

  test('a field that does not exist is an error, also nested and inside lists', () => {
    usageError(() => encodeRequestMessage(method, { data: '{"bigg": 1}' }), /-d does not fit demo\.v1\.Req: .*unknown field: "bigg"/)
    usageError(() => encodeRequestMessage(method, { data: '{"inner": {"usr": "x"}}' }), /^-d does not fit demo\.v1\.Req: inner: unknown field: "usr"$/)
    usageError(
      () => encodeRequestMessage(method, { data: '{"list": [{"userName": "a"}, {"zzz": 1}]}' }),
      /^-d does not fit demo\.v1\.Req: list\[1\]: unknown field: "zzz"$/,
    )
    usageError(() => encodeRequestMessage(method, { data: '{"kind": "NOPE"}' }), /unknown enum value: "NOPE"/)
    usageError(() => encodeRequestMessage(method, { data: '{"big": "abc"}' }), /invalid integer/)
    // Named by the path in the user's JSON, not by the type (shared.Inner is at two places here).
    usageError(() => encodeRequestMessage(method, { data: '{"inner": {"ids": ["x"]}}' }), /^-d does not fit demo\.v1\.Req: inner\.ids: invalid integer: "x"$/)
    usageError(
      () => encodeRequestMessage(method, { data: '{"list": [{"userName": "a"}, {"user_name": 5}]}' }),
      /^-d does not fit demo\.v1\.Req: list\[1\]\.user_name: expected string: 5$/,
    )
    usageError(() => encodeRequestMessage(method, { data: '{"blob": "not base64!"}' }), /^-d does not fit demo\.v1\.Req: blob: not valid base64$/)
    usageError(() => encodeRequestMessage(method, { data: '{"tags": {"a": "x"}}' }), /^-d does not fit demo\.v1\.Req: tags: invalid integer: "x"$/)
    usageError(() => encodeRequestMessage(method, { data: '{"big": ' }), /-d is not valid JSON/)
    usageError(() => encodeRequestMessage(method, { data: '{}', binaryFile: proto }), /one of -d, -D and -B/)
  })

  test('-D reads the JSON from a file; -B sends a file as it is, once it decodes as the request type', () => {
    const jsonFile = join(dir, 'req.json')
    writeFileSync(jsonFile, '{"inner": {"userName": "file"}}')
    const fromFile = encodeRequestMessage(method, { dataFile: jsonFile })
    assert.deepEqual(Buffer.from(fromFile), expected({ inner: { userName: 'file' } }))
    const binFile = join(dir, 'req.bin')
    writeFileSync(binFile, fromFile)
    assert.deepEqual(Buffer.from(encodeRequestMessage(method, { binaryFile: binFile })), Buffer.from(fromFile))
    writeFileSync(join(dir, 'bad.bin'), Buffer.from([0x0a, 0xff])) // field 1 as length-delimited with a length past the end
    usageError(() => encodeRequestMessage(method, { binaryFile: join(dir, 'bad.bin') }), /is not an encoded demo\.v1\.Req/)
    usageError(() => encodeRequestMessage(method, { dataFile: join(dir, 'nope.json') }), /cannot read -D .*ENOENT/)
    writeFileSync(join(dir, 'typo.json'), '{"innr": {}}')
    usageError(() => encodeRequestMessage(method, { dataFile: join(dir, 'typo.json') }), /-D .*typo\.json does not fit .*unknown field: "innr"/)
  })

  test('the body is one uncompressed length-prefixed frame around the message', () => {
    const message = encodeRequestMessage(method, { data: '{"inner": {"userName": "x"}}' })
    const body = encodeRequestBody(method, { data: '{"inner": {"userName": "x"}}' })
    assert.equal(body[0], 0)
    assert.equal(body.readUInt32BE(1), message.length)
    assert.deepEqual(
      unframeMessages(body).map((m) => Buffer.from(m)),
      [Buffer.from(message)],
    )
    const two = Buffer.concat([frameMessage(Buffer.from('ab')), frameMessage(Buffer.alloc(0))])
    assert.deepEqual(
      unframeMessages(two).map((m) => m.length),
      [2, 0],
    )
    assert.throws(() => unframeMessages(body.subarray(0, body.length - 1)), /truncated gRPC message/)
    assert.throws(() => unframeMessages(Buffer.from([0, 0])), /truncated gRPC frame header/)
  })
})

describe('answers and deadlines', () => {
  const lookup = (h: Record<string, string>) => (name: string) => h[name]

  test('grpc-status from the trailers, else from a trailers-only answer, else from the HTTP status', () => {
    assert.deepEqual(classifyGrpcAnswer(200, lookup({}), lookup({ 'grpc-status': '0' })), { code: 0, message: '' })
    assert.deepEqual(classifyGrpcAnswer(200, lookup({ 'grpc-status': '14', 'grpc-message': 'no%20backend%20%E2%9C%93' }), null), {
      code: 14,
      message: 'no backend ✓',
    })
    assert.equal(classifyGrpcAnswer(200, lookup({ 'grpc-status': '0' }), lookup({ 'grpc-status': '4' })).code, 4, 'trailers win over headers')
    assert.equal(classifyGrpcAnswer(503, lookup({}), null).code, 14)
    assert.equal(classifyGrpcAnswer(404, lookup({}), null).code, 12)
    assert.equal(classifyGrpcAnswer(200, lookup({}), lookup({})).code, 2, 'a 200 that never said how the call ended is UNKNOWN')
    assert.equal(decodeGrpcMessage('100%'), '100%', 'a malformed escape is shown as sent')
    assert.equal(grpcCodeName(4), 'DEADLINE_EXCEEDED')
  })

  test('--non-fatal-status takes code names (any case) or numbers, default UNAVAILABLE, never OK', () => {
    assert.deepEqual(parseGrpcNonFatal(undefined), [14])
    assert.deepEqual(parseGrpcNonFatal('unavailable,RESOURCE_EXHAUSTED,4'), [14, 8, 4])
    assert.deepEqual(parseGrpcNonFatal(''), [])
    usageError(() => parseGrpcNonFatal('UNAVAILBLE'), /"UNAVAILBLE" is not a gRPC status/)
    usageError(() => parseGrpcNonFatal('OK'), /OK is a success/)
    usageError(() => parseGrpcNonFatal('17'), /"17" is not a gRPC status/)
  })

  test('grpc-timeout: at most 8 digits, rounded up, never zero', () => {
    assert.equal(grpcTimeoutHeader(250), '250m')
    assert.equal(grpcTimeoutHeader(0.2), '1m')
    assert.equal(grpcTimeoutHeader(-5), '1m')
    assert.equal(grpcTimeoutHeader(99_999_999), '99999999m')
    assert.equal(grpcTimeoutHeader(100_000_000), '100000S')
    for (const ms of [1, 37.2, 5_000, 123_456_789, 1e12]) {
      const header = grpcTimeoutHeader(ms)
      assert.match(header, /^\d{1,8}[HSm]$/)
      assert.ok(parseGrpcTimeout(header)! >= ms, `${header} must not be shorter than ${ms} ms`)
    }
    assert.equal(parseGrpcTimeout('5x'), null)
  })
})
