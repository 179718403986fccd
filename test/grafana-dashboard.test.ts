/**
 * deploy/grafana/hedgebench-watch.json is built on the metrics a watch
 * serves: every metric its queries name is one the endpoint exposes (read
 * from a live endpoint's exposition, not from a list kept beside it).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { startMetrics } from '../src/cli/metrics-server.js'

const DASHBOARD = new URL('../../deploy/grafana/hedgebench-watch.json', import.meta.url)

test('every metric the dashboard queries is one --metrics-port serves, and every one served is on the dashboard', async () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Array<{ title: string; targets: Array<{ expr: string }> }> }
  const queried = new Set(dashboard.panels.flatMap((p) => p.targets.flatMap((t) => t.expr.match(/hedgebench_[a-z_]+/g) ?? [])))
  const metrics = await startMetrics({ host: '127.0.0.1', port: 0 }, '0')
  try {
    const text = await (await fetch(`http://127.0.0.1:${metrics.port}/metrics`)).text()
    const families = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]))
    const served = (name: string): boolean => families.has(name) || families.get(name.replace(/_(bucket|sum|count)$/, '')) === 'histogram'
    assert.deepEqual(
      [...queried].filter((name) => !served(name)),
      [],
    )
    const shown = new Set([...queried].map((name) => name.replace(/_(bucket|sum|count)$/, '')))
    assert.deepEqual(
      [...families.keys()].filter((name) => !shown.has(name)),
      [],
    )
  } finally {
    await metrics.close()
  }
})
