/**
 * A session's open streams by id, for h2-client.ts. Not a Map: a
 * long-lived Map whose entries are added and deleted all run long (every
 * stream) keeps the young objects it pointed to alive across V8's
 * scavenges, so every request's objects were copied and promoted until the
 * next full collection (measured on Node 20: scavenges of 12-60 ms with
 * half the young generation surviving, about a quarter of the client's
 * CPU at 40 streams; the same workload on a null-prototype object: under
 * 1 ms, nothing surviving). docs/http2.md has the figures.
 */
export class StreamTable<T> {
  #byId: Record<number, T> = Object.create(null) as Record<number, T>
  #size = 0

  get size(): number {
    return this.#size
  }

  get(id: number): T | undefined {
    return this.#byId[id]
  }

  set(id: number, value: T): void {
    if (this.#byId[id] === undefined) this.#size++
    this.#byId[id] = value
  }

  delete(id: number): void {
    if (this.#byId[id] === undefined) return
    delete this.#byId[id]
    this.#size--
  }

  /** The streams, in the order of their ids (a copy: the caller may change the table while it goes through them). */
  values(): T[] {
    return Object.values(this.#byId)
  }

  clear(): void {
    this.#byId = Object.create(null) as Record<number, T>
    this.#size = 0
  }
}
