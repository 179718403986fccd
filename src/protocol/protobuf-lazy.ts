/**
 * protobufjs, loaded on first use: only gRPC runs need it, and an HTTP run
 * or `--help` should not pay for parsing it at start-up (the CLI's start-up
 * time is measured). protobufjs is CommonJS, so a synchronous require keeps
 * schema loading synchronous, like the rest of option resolution.
 */
import { createRequire } from 'node:module'
import type * as Protobuf from 'protobufjs'

type ProtoJson = typeof import('protobufjs/ext/protojson.js')

const load = createRequire(import.meta.url)
let protobufLib: typeof Protobuf | null = null
let protojsonLib: ProtoJson | null = null

/** protobufjs with its descriptor extension installed (Root.fromDescriptor, for --protoset). */
export function protobuf(): typeof Protobuf {
  if (protobufLib) return protobufLib
  load('protobufjs/ext/descriptor.js')
  protobufLib = load('protobufjs') as typeof Protobuf
  return protobufLib
}

/** google.protobuf's descriptor messages (FileDescriptorProto, ...), as protobufjs's descriptor extension defines them. */
export function descriptorTypes(): Protobuf.Namespace {
  protobuf()
  return load('protobufjs/ext/descriptor.js') as Protobuf.Namespace
}

/** protobufjs's ProtoJSON reader and writer (the protobuf JSON mapping). */
export function protojson(): ProtoJson {
  protojsonLib ??= load('protobufjs/ext/protojson.js') as ProtoJson
  return protojsonLib
}
