/**
 * A load schedule (--load-schedule) and --skip-first in words: the schedule
 * as the user gave it, for the header; and, per phase, what it asked beside
 * what was sent, with the second that fell furthest behind. Text and HTML
 * say it alike.
 */
import { formatThreshold } from '../core/duration.js'
import type { LoadSchedule, PhaseResult } from '../results/run-result.js'

/** "step 50/s → 150/s, +50/s every 1 s": the schedule as given. */
export function scheduleWords(s: LoadSchedule): string {
  if (s.kind === 'const') return `const ${s.start}/s`
  const sign = s.step > 0 ? '+' : '-'
  const every = s.kind === 'line' ? 'every second' : `every ${formatThreshold(s.stepMs)}`
  const end = s.end === null ? '' : ` → ${s.end}/s`
  const max = s.maxMs === null ? '' : `, for at most ${formatThreshold(s.maxMs)}`
  return `${s.kind} ${s.start}/s${end}, ${sign}${Math.abs(s.step)}/s ${every}${max}`
}

/** A phase's schedule beside what its window sent (the skipped requests among them; interleaved phases share one window), and what --skip-first left out; no lines without either. */
export function phaseScheduleText(phase: PhaseResult, schedule: LoadSchedule | undefined): string[] {
  const lines: string[] = []
  const seconds = phase.schedule
  if (seconds && schedule) {
    const asked = seconds.reduce((sum, s) => sum + s.asked, 0)
    const sent = seconds.reduce((sum, s) => sum + s.sent, 0)
    const worst = seconds.reduce((w, s) => (s.asked - s.sent > w.asked - w.sent ? s : w), seconds[0]!)
    const behind = worst && worst.sent < worst.asked ? `; furthest behind at ${worst.t} s: ${worst.sent} sent of ${worst.asked} asked` : '; every second on schedule'
    lines.push(`Schedule (${scheduleWords(schedule)}): ${asked} sends asked, ${sent} sent${behind}`)
  }
  if (phase.skipped !== undefined) lines.push(`Skipped: the first ${phase.skipped} requests were sent and left out of every figure above (--skip-first)`)
  return lines
}
