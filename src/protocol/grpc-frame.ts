/**
 * gRPC's message framing on HTTP/2 (the length-prefixed message of the gRPC
 * over HTTP/2 spec): 1 byte compressed flag, 4 bytes big-endian length, then
 * the message. hedgebench never compresses, so the flag is always 0.
 */

/** One uncompressed frame around `message`. */
export function frameMessage(message: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.length)
  frame[0] = 0
  frame.writeUInt32BE(message.length, 1)
  frame.set(message, 5)
  return frame
}

/**
 * The messages in a complete response body. Throws on a truncated frame (a
 * server that broke the framing), which the caller counts as an error.
 */
export function unframeMessages(body: Uint8Array): Uint8Array[] {
  const messages: Uint8Array[] = []
  const view = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  let at = 0
  while (at < view.length) {
    if (view.length - at < 5) throw new Error(`truncated gRPC frame header (${view.length - at} bytes)`)
    const length = view.readUInt32BE(at + 1)
    if (view.length - at - 5 < length) throw new Error(`truncated gRPC message (${view.length - at - 5} of ${length} bytes)`)
    messages.push(view.subarray(at + 5, at + 5 + length))
    at += 5 + length
  }
  return messages
}
