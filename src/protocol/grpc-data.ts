/**
 * A data file of several messages (ghz's -D with a JSON array, or NDJSON:
 * one JSON object a line), each encoded once before the run; the calls send
 * them round-robin or at random (--data-order). A fault names the item
 * ("-D calls.json[2]") or the line ("calls.ndjson:4").
 */
import { UsageError } from '../core/errors.js'
import { fromJsonValue, parseKeepingIntegers } from './grpc-message.js'
import type { GrpcMethod } from './grpc-method.js'

/** Each message of `text` encoded, or null when it holds one message (a JSON object: -d's and -D's usual form). */
export function encodeDataList(method: GrpcMethod, text: string, flag: string, file: string | null): Uint8Array[] | null {
  const trimmed = text.trim()
  if (trimmed.startsWith('[')) {
    let items: unknown
    try {
      items = parseKeepingIntegers(trimmed)
    } catch (err) {
      throw new UsageError(`${flag} is not valid JSON: ${(err as Error).message}`)
    }
    if (!Array.isArray(items) || items.length === 0) throw new UsageError(`${flag}: an array of messages must hold at least one`)
    return items.map((item, i) => fromJsonValue(method, item, `${flag}[${i}]`))
  }
  const lines = text.split(/\r?\n/)
  if (file === null || lines.filter((l) => l.trim() !== '').length < 2) return null
  return lines.flatMap((line, i) => {
    if (line.trim() === '') return []
    const where = `${file}:${i + 1}`
    let json: unknown
    try {
      json = parseKeepingIntegers(line)
    } catch (err) {
      throw new UsageError(`${where}: not valid JSON (${(err as Error).message})`)
    }
    return [fromJsonValue(method, json, where)]
  })
}

/** The next message of a list, round-robin from call `index` (every `stride`-th: a worker thread's share), or drawn with `random`. */
export function dataCycle(list: readonly Uint8Array[], order: 'round-robin' | 'random', index: number, stride: number, random: () => number): () => Uint8Array {
  let next = index
  return () => {
    if (order === 'random') return list[Math.floor(random() * list.length)]!
    const message = list[next % list.length]!
    next += stride
    return message
  }
}
