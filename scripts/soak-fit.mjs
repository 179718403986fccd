// Reads a soak's CSV (scripts/soak-probe.mjs) and prints RSS and heap at 1, 10, 30 and 60 minutes (the sample nearest
// to each, when the soak got that far) and the slope per hour of a least-squares line through the samples from the
// first minute on (the first minute is start-up: the code loaded, compiled, the young generation grown).
// Usage: node scripts/soak-fit.mjs soak.csv
import { readFileSync } from 'node:fs'

const [header, ...lines] = readFileSync(process.argv[2], 'utf8').trim().split('\n')
const columns = header.split(',')
const rows = lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [columns[i], Number(v)])))
const last = rows.at(-1)?.seconds ?? 0

function nearest(seconds) {
  if (seconds > last + 10) return undefined
  return rows.reduce((best, r) => (Math.abs(r.seconds - seconds) < Math.abs(best.seconds - seconds) ? r : best))
}

/** Ordinary least squares of y on the hours: the slope, in y's unit per hour. */
function slopePerHour(points, key) {
  const xs = points.map((r) => r.seconds / 3600)
  const ys = points.map((r) => r[key])
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length
  const my = ys.reduce((a, b) => a + b, 0) / ys.length
  let sxy = 0
  let sxx = 0
  for (let i = 0; i < xs.length; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my)
    sxx += (xs[i] - mx) ** 2
  }
  return sxx === 0 ? Number.NaN : sxy / sxx
}

console.log(`${rows.length} samples, ${(last / 60).toFixed(1)} min`)
for (const minutes of [1, 10, 30, 60]) {
  const r = nearest(minutes * 60)
  console.log(`${minutes} min: ${r === undefined ? 'not reached' : `RSS ${r.rss_mb} MB, heap used ${r.heap_used_mb} MB (sample at ${r.seconds} s)`}`)
}
const fitted = rows.filter((r) => r.seconds >= 60)
if (fitted.length >= 2) {
  const fmt = (v) => `${v >= 0 ? '+' : ''}${v.toFixed(2)} MB/h`
  console.log(
    `least-squares slope from 1 min on (${fitted.length} samples): RSS ${fmt(slopePerHour(fitted, 'rss_mb'))}, heap used ${fmt(slopePerHour(fitted, 'heap_used_mb'))}`,
  )
  const rss = fitted.map((r) => r.rss_mb)
  console.log(`RSS from 1 min on: min ${Math.min(...rss).toFixed(1)} MB, max ${Math.max(...rss).toFixed(1)} MB`)
}
// Older CSVs have no load column.
const loads = rows.map((r) => r.load1).filter((v) => Number.isFinite(v))
if (loads.length > 0)
  console.log(
    `load average (1 min) while it ran: ${Math.min(...loads)} to ${Math.max(...loads)}, mean ${(loads.reduce((a, b) => a + b, 0) / loads.length).toFixed(2)}`,
  )
