/**
 * The gRPC peer in `npm run bench`: a plain grpc-js client loop, -c calls in
 * flight on one channel, n unary calls in all to the bundled replica's
 * Work method (an empty WorkRequest, sent as bytes: no protobuf work on
 * either side of the comparison). Prints `{"requests": N, "failed": F}`.
 *
 *   node dist/bench/grpc-js-client.js 127.0.0.1:PORT 40 20000
 */
import { credentials, Client } from '@grpc/grpc-js'

const [address, c, n] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])]
const client = new Client(address, credentials.createInsecure())
const identity = (b: Buffer): Buffer => b
const empty = Buffer.alloc(0)
let started = 0
let done = 0
let failed = 0

await new Promise<void>((resolve) => {
  const next = (): void => {
    if (started >= n) {
      if (done === n) resolve()
      return
    }
    started++
    client.makeUnaryRequest('/hedgebench.sim.v1.Replica/Work', identity, identity, empty, (err) => {
      done++
      if (err) failed++
      next()
    })
  }
  for (let i = 0; i < Math.min(c, n); i++) next()
})
client.close()
process.stdout.write(JSON.stringify({ requests: done, failed }) + '\n')
