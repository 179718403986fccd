import assert from 'node:assert/strict'
import { test } from 'node:test'
import { StreamTable } from '../src/engine/stream-table.js'

/** A client's stream ids: odd, rising by 2. */
const stream = (n: number): { id: number } => ({ id: 2 * n + 1 })

test('streams are found by id until deleted, and the size counts them', () => {
  const t = new StreamTable<{ id: number }>()
  const a = stream(0)
  const b = stream(1)
  t.set(a)
  t.set(b)
  assert.equal(t.size, 2)
  assert.equal(t.get(1), a)
  assert.equal(t.get(3), b)
  assert.equal(t.get(5), undefined)
  t.delete(1)
  t.delete(1)
  t.delete(7)
  assert.equal(t.size, 1)
  assert.equal(t.get(1), undefined)
  assert.equal(t.get(3), b)
})

test('a stream still open when its slot comes round again is kept aside, and found and deleted there', () => {
  const t = new StreamTable<{ id: number }>()
  const old = stream(0)
  t.set(old)
  // 40 at a time for 10,000 streams: the first stays open the whole time.
  for (let n = 1; n <= 10_000; n++) {
    t.set(stream(n))
    if (n > 40) t.delete(stream(n - 40).id)
  }
  assert.equal(t.size, 41)
  assert.equal(t.get(old.id), old)
  assert.equal(t.get(stream(10_000).id)?.id, stream(10_000).id)
  assert.equal(t.get(stream(9_960).id), undefined)
  assert.deepEqual(
    t.values().map((s) => s.id),
    [old.id, ...Array.from({ length: 40 }, (_, i) => stream(9_961 + i).id)],
  )
  t.delete(old.id)
  assert.equal(t.get(old.id), undefined)
  assert.equal(t.size, 40)
})

test('more streams open at once than the ring holds: it grows, and every one is found, in id order', () => {
  const t = new StreamTable<{ id: number }>()
  const all = Array.from({ length: 1000 }, (_, n) => stream(n))
  for (const s of all) t.set(s)
  assert.equal(t.size, 1000)
  for (const s of all) assert.equal(t.get(s.id), s)
  assert.deepEqual(t.values(), all)
  for (const s of all.slice(0, 500)) t.delete(s.id)
  assert.equal(t.size, 500)
  assert.deepEqual(t.values(), all.slice(500))
  t.clear()
  assert.equal(t.size, 0)
  assert.equal(t.get(all[999]!.id), undefined)
  assert.deepEqual(t.values(), [])
})

test('past the largest ring, streams whose slots are taken wait aside: none is lost', () => {
  const t = new StreamTable<{ id: number }>()
  const all = Array.from({ length: 10_000 }, (_, n) => stream(n))
  for (const s of all) t.set(s)
  assert.equal(t.size, 10_000)
  for (const s of all) assert.equal(t.get(s.id), s)
  for (const s of all) t.delete(s.id)
  assert.equal(t.size, 0)
  assert.deepEqual(t.values(), [])
})
