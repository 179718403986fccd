/**
 * What this process's heap holds, counted from a V8 heap snapshot (taken
 * after a full collection, so only what is reachable): every node, and the
 * objects of the named constructors. Counts, not bytes: a retained object
 * per request shows as thousands of them, whatever the collector's timing.
 */
import { getHeapSnapshot } from 'node:v8'

export interface HeapCounts {
  /** Every node of the snapshot: objects, arrays, closures, strings, code. */
  nodes: number
  /** Objects by constructor name, for the names asked. */
  byName: Record<string, number>
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } }
  nodes: number[]
  strings: string[]
}

export async function heapCounts(names: readonly string[]): Promise<HeapCounts> {
  const chunks: string[] = []
  for await (const chunk of getHeapSnapshot()) chunks.push(String(chunk))
  const snap = JSON.parse(chunks.join('')) as Snapshot
  const fields = snap.snapshot.meta.node_fields
  const types = snap.snapshot.meta.node_types[0]
  const type = fields.indexOf('type')
  const name = fields.indexOf('name')
  const byName: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]))
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    if (types[snap.nodes[i + type]!] !== 'object') continue
    const own = snap.strings[snap.nodes[i + name]!]!
    if (own in byName) byName[own]!++
  }
  return { nodes: snap.nodes.length / fields.length, byName }
}
