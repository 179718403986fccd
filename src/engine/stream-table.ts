/**
 * A session's open streams by id, for h2-client.ts: a ring of slots
 * indexed by the id (a client's ids are odd and rise by 2, so the open
 * ones are a window of consecutive slots), with a Map beside it for the
 * rare stream that stays open while a whole ring of later ones come and
 * go. Not a Map for every stream: a long-lived Map whose entries are all
 * added and deleted keeps the young objects it pointed to alive across
 * V8's scavenges (about a quarter of the client's CPU at 40 streams), and
 * a null-prototype object keyed by ids is a hash table whose deletes cost
 * as much as the rest of a stream's bookkeeping. docs/http2.md has the
 * figures.
 */
export class StreamTable<T extends { id: number }> {
  #ring: (T | undefined)[] = new Array(RING_INITIAL).fill(undefined)
  #mask = RING_INITIAL - 1
  /** Streams whose slot a later stream needed while they were still open. */
  #aside = new Map<number, T>()
  #size = 0

  get size(): number {
    return this.#size
  }

  get(id: number): T | undefined {
    const st = this.#ring[(id >>> 1) & this.#mask]
    if (st !== undefined && st.id === id) return st
    return this.#aside.size === 0 ? undefined : this.#aside.get(id)
  }

  /** Adds `value` under its id (the next the session gives: higher than any in the table). */
  set(value: T): void {
    const at = (value.id >>> 1) & this.#mask
    const holder = this.#ring[at]
    if (holder !== undefined) {
      // A full ring grows; in a sparse one, the stream in the way is the odd one out and steps aside.
      if (2 * this.#size > this.#mask && this.#mask + 1 < RING_MAX) {
        this.#grow()
        return this.set(value)
      }
      this.#aside.set(holder.id, holder)
    }
    this.#ring[at] = value
    this.#size++
  }

  delete(id: number): void {
    const at = (id >>> 1) & this.#mask
    const st = this.#ring[at]
    if (st !== undefined && st.id === id) this.#ring[at] = undefined
    else if (!this.#aside.delete(id)) return
    this.#size--
  }

  /** The streams, in the order of their ids (a copy: the caller may change the table while it goes through them). */
  values(): T[] {
    const all = [...this.#aside.values()]
    for (const st of this.#ring) if (st !== undefined) all.push(st)
    return all.sort((a, b) => a.id - b.id)
  }

  clear(): void {
    this.#ring.fill(undefined)
    this.#aside.clear()
    this.#size = 0
  }

  /** Twice the slots: more than half of them are open streams (a server's limit above the ring's size). */
  #grow(): void {
    const streams = this.values()
    this.#ring = new Array(2 * (this.#mask + 1)).fill(undefined)
    this.#mask = this.#ring.length - 1
    this.#aside.clear()
    this.#size = 0
    for (const st of streams) this.set(st)
  }
}

/** Slots at first: room for 40 streams at a time (the default -c) with few collisions. */
const RING_INITIAL = 128
/** At most this many slots (a server's limit may be 2^31): past it, a stream whose slot is taken waits aside. */
const RING_MAX = 4096
