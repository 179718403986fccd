/**
 * Where the simulated gRPC replicas' service is declared and what it is
 * called, without loading the server (grpc-replica.ts pulls in grpc-js):
 * the CLI names these for every run, gRPC or not.
 */
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { STATS_SERVICE } from '../wire/grpc-stats.js'

/** The bundled service's schema: dist/src/sim/ -> ../../../proto. */
export const SIM_PROTO = resolve(dirname(fileURLToPath(import.meta.url)), '../../../proto/hedgebench-sim.proto')
export const SIM_SERVICE = STATS_SERVICE
export const SIM_WORK_CALL = `${SIM_SERVICE}/Work`
