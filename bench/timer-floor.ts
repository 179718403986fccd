/**
 * The floor of a hedge timer in Node, for `npm run bench`: `inFlight`
 * timers of `delayMs` each, re-armed as they fire (0-3 ms apart, as
 * requests start), in a process that does nothing else. Each firing's
 * lateness is measured as hedgebench measures a hedge timer's
 * (hedged-request.ts: performance.now() at the firing minus the
 * performance.now() at arming plus the delay, never below 0), so the two
 * can be set side by side: what this shows is the platform's (libuv's
 * millisecond clock, the kernel's wake-ups), not hedgebench's.
 *
 *   node dist/bench/timer-floor.js DELAY_MS IN_FLIGHT FIRINGS
 *
 * A timer that fires before its time (libuv starts it from its loop's
 * millisecond clock, read at the start of the turn) is armed again for the
 * rest by hedgebench's own rule (engine/early-timer.ts, as its hedge timers
 * and open-loop sends are). Prints `{"p50":ms,"p99":ms,"max":ms,"firings":n,"early":n}`;
 * early counts the timers whose first firing came before their time.
 */
import { stillEarly } from '../src/engine/early-timer.js'

const [delayArg = '15', inFlightArg = '40', firingsArg = '4000'] = process.argv.slice(2)
const [delayMs, inFlight, firings] = [Number(delayArg), Number(inFlightArg), Number(firingsArg)]
if (!(delayMs >= 1 && inFlight >= 1 && firings >= 1)) {
  process.stderr.write('usage: timer-floor DELAY_MS IN_FLIGHT FIRINGS\n')
  process.exit(2)
}

const lateness: number[] = []
let armed = 0
let early = 0

function arm(): void {
  if (armed >= firings) return
  armed++
  const due = performance.now() + delayMs
  let rearms = 0
  const fire = (): void => {
    const now = performance.now()
    if (rearms === 0 && now < due) early++
    const rest = stillEarly(now, due, rearms)
    if (rest > 0) {
      rearms++
      return void setTimeout(fire, rest)
    }
    lateness.push(Math.max(0, now - due))
    if (lateness.length === firings) return report()
    // The next "request" starts a little later, as a slot's next one does.
    setTimeout(arm, Math.random() * 3)
  }
  setTimeout(fire, delayMs)
}

function report(): void {
  const sorted = lateness.sort((a, b) => a - b)
  const at = (q: number): number => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!
  process.stdout.write(JSON.stringify({ p50: at(0.5), p99: at(0.99), max: at(1), firings: sorted.length, early }) + '\n')
  process.exit(0)
}

// Bounded: `firings` timers in all, and the process after 10 minutes.
setTimeout(() => {
  process.stderr.write('timer-floor: no end within 10 minutes\n')
  process.exit(1)
}, 600_000).unref()
for (let i = 0; i < inFlight; i++) arm()
