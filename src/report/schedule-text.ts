/**
 * The schedules (--load-schedule, --concurrency-schedule) and --skip-first
 * in words, for the text report: a schedule as the user gave it, for the
 * header; and, per phase, what it asked beside what was sent (a rate: with
 * the second that fell furthest behind), and what was skipped.
 */
import { formatThreshold } from '../core/duration.js'
import type { LoadSchedule, PhaseResult, RunConfig, ScheduleSecond } from '../results/run-result.js'

/** "step 50/s → 150/s, +50/s every 1 s": the schedule as given (`unit`: '/s' for a rate, '' for requests in flight: "step 2 → 8, +2 every 300 ms"). */
export function scheduleWords(s: LoadSchedule, unit = '/s'): string {
  if (s.kind === 'const') return `const ${s.start}${unit}`
  const sign = s.step > 0 ? '+' : '-'
  const every = s.kind === 'line' ? 'every second' : `every ${formatThreshold(s.stepMs)}`
  const end = s.end === null ? '' : ` → ${s.end}${unit}`
  const max = s.maxMs === null ? '' : `, for at most ${formatThreshold(s.maxMs)}`
  return `${s.kind} ${s.start}${unit}${end}, ${sign}${Math.abs(s.step)}${unit} ${every}${max}`
}

/** The schedules of a run, for its header: "--load-schedule step 50/s → 150/s, ..." or "--concurrency-schedule ...". */
export function schedulesHeader(c: RunConfig): string {
  if (c.loadSchedule) return ` · --load-schedule ${scheduleWords(c.loadSchedule)} (open loop)`
  if (c.concurrencySchedule) return ` · --concurrency-schedule ${scheduleWords(c.concurrencySchedule, '')} (closed loop)`
  return ''
}

/** A phase's schedule beside what its window sent (the skipped requests among them; interleaved phases share one window), and what --skip-first left out; no lines without either. */
export function phaseScheduleText(phase: PhaseResult, c: RunConfig): string[] {
  const lines: string[] = []
  const seconds = phase.scheduleSeconds
  const sent = seconds?.reduce((sum, s) => sum + s.sent, 0) ?? 0
  if (seconds && c.loadSchedule) {
    const behind = (s: ScheduleSecond): number => (s.asked ?? 0) - s.sent
    const asked = seconds.reduce((sum, s) => sum + (s.asked ?? 0), 0)
    const worst = seconds.reduce((w, s) => (behind(s) > behind(w) ? s : w), seconds[0]!)
    const words = worst && behind(worst) > 0 ? `; furthest behind at ${worst.t} s: ${worst.sent} sent of ${worst.asked} asked` : '; every second on schedule'
    lines.push(`Schedule (${scheduleWords(c.loadSchedule)}): ${asked} sends asked, ${sent} sent${words}`)
  }
  if (seconds && c.concurrencySchedule) {
    const last = seconds[seconds.length - 1]
    const now = last?.concurrency === undefined ? '' : `, ${last.concurrency} in flight asked in its last second`
    lines.push(`Concurrency schedule (${scheduleWords(c.concurrencySchedule, '')}): ${sent} sent${now} (each second's in the JSON and the HTML)`)
  }
  if (phase.skipped !== undefined) lines.push(`Skipped: the first ${phase.skipped} requests were sent and left out of every figure above (--skip-first)`)
  return lines
}
