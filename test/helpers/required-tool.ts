/**
 * A test that needs an outside tool (Chromium, openssl, script) skips itself
 * without it, so `npm test` runs on any machine. Where the suite's runner
 * installed the tools and named them in HEDGEBENCH_REQUIRE_TOOLS (.ci/run
 * does), a missing one fails the file instead: CI must not pass with the
 * browser checks quietly skipped.
 */
export function skipWithout(available: boolean, tool: string, why: string): string | false {
  if (available) return false
  const required = (process.env.HEDGEBENCH_REQUIRE_TOOLS ?? '').split(/[\s,]+/).filter(Boolean)
  if (required.includes(tool)) throw new Error(`${tool} is required by HEDGEBENCH_REQUIRE_TOOLS but not available: ${why}`)
  return why
}
