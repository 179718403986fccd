// Preloaded into the watch under soak (node --import): every SOAK_EVERY_S seconds (10) it appends the process's own
// memory to SOAK_CSV, with the machine's 1-minute load average (on a shared machine, the other work is part of the
// figures). From inside, because the heap is only visible there; the timer is unref'd so that it never keeps the
// process alive, and the write is synchronous so that the last line is there even if the watch is killed.
import { appendFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'

const file = process.env.SOAK_CSV
if (file !== undefined) {
  const everyMs = 1000 * Number(process.env.SOAK_EVERY_S ?? 10)
  const started = Date.now()
  const mb = (bytes) => (bytes / 1048576).toFixed(2)
  writeFileSync(file, 'seconds,rss_mb,heap_used_mb,heap_total_mb,external_mb,array_buffers_mb,load1\n')
  const sample = () => {
    const m = process.memoryUsage()
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    appendFileSync(file, `${seconds},${mb(m.rss)},${mb(m.heapUsed)},${mb(m.heapTotal)},${mb(m.external)},${mb(m.arrayBuffers)},${loadavg()[0].toFixed(2)}\n`)
  }
  sample()
  setInterval(sample, everyMs).unref()
}
