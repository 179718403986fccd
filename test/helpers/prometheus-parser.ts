/**
 * An exposition read by Prometheus' own parsers (Debian's
 * python3-prometheus-client, which .ci/run installs): the text format's
 * (prometheus_client.parser) or OpenMetrics' (prometheus_client.openmetrics
 * .parser, strict: it refuses the text format). Not string matching: what a
 * scraper would make of it.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'

export type Families = Record<string, { type: string; samples: Array<[string, Record<string, string>, number]> }>

const PYTHON = '/usr/bin/python3'

const SCRIPT = (module: string): string => `
import json, sys
from ${module} import text_string_to_metric_families
out = {}
for f in text_string_to_metric_families(sys.stdin.read()):
    out[f.name] = {"type": f.type, "samples": [[s.name, s.labels, s.value] for s in f.samples]}
print(json.dumps(out))
`

/** Whether the parsers are installed (a test skips without them: test/helpers/required-tool.ts). */
export const hasPrometheusParser = spawnSync(PYTHON, ['-c', 'import prometheus_client.openmetrics.parser'], { timeout: 10_000 }).status === 0

/** The families of an exposition, as the given format's parser reads it; a text it refuses fails the assertion with the parser's reason. */
export function parseExposition(text: string, format: 'prometheus' | 'openmetrics' = 'prometheus'): Families {
  const module = format === 'prometheus' ? 'prometheus_client.parser' : 'prometheus_client.openmetrics.parser'
  const parsed = spawnSync(PYTHON, ['-c', SCRIPT(module)], { input: text, encoding: 'utf8', timeout: 10_000 })
  assert.equal(parsed.status, 0, parsed.stderr)
  return JSON.parse(parsed.stdout) as Families
}
