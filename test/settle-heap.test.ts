/**
 * settle-heap.ts: before a run's first window a full collection, before the
 * later ones only a young one, because a full collection between phases
 * frees the previous window's objects and V8 then throws away the optimized
 * request path that embedded them. Checked on the collections V8 itself
 * reports (PerformanceObserver 'gc' entries: their kind).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks'
import { settleHeap } from '../src/run/settle-heap.js'

/** The kinds of the collections `f` caused, as V8 reports them. */
async function collectionsDuring(f: () => void): Promise<number[]> {
  const kinds: number[] = []
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries() as Array<PerformanceEntry & { detail?: { kind?: number } }>) kinds.push(e.detail?.kind ?? -1)
  })
  observer.observe({ entryTypes: ['gc'] })
  f()
  // gc entries are delivered asynchronously: give them a turn of the loop (bounded).
  for (let i = 0; i < 20 && kinds.length === 0; i++) await new Promise((r) => setTimeout(r, 10))
  observer.disconnect()
  return kinds
}

test('settleHeap: full = a major collection; young = a scavenge and no major one', async () => {
  const full = await collectionsDuring(() => settleHeap('full'))
  assert.ok(full.includes(constants.NODE_PERFORMANCE_GC_MAJOR), `full: kinds ${full.join(', ')}`)
  const young = await collectionsDuring(() => settleHeap('young'))
  assert.ok(young.includes(constants.NODE_PERFORMANCE_GC_MINOR), `young: kinds ${young.join(', ')}`)
  assert.ok(!young.includes(constants.NODE_PERFORMANCE_GC_MAJOR), `young: kinds ${young.join(', ')}`)
})
