/**
 * A small RFC 4180 parser for tests (csv-parse is not a dependency): quoted
 * fields, doubled quotes, commas and line breaks inside quotes, CRLF or LF.
 */
import assert from 'node:assert/strict'
import { redactUrl } from '../../src/core/redact.js'
import { PERCENTILE_KEYS, type RunResult } from '../../src/results/run-result.js'

export function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (ch === '"') quoted = false
      else field += ch
    } else if (ch === '"') quoted = true
    else if (ch === ',') {
      row.push(field)
      field = ''
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++
      row.push(field)
      rows.push(row)
      row = []
      field = ''
    } else field += ch
  }
  if (quoted) throw new Error('unterminated quoted field')
  if (field !== '' || row.length > 0) {
    row.push(field)
    rows.push(row)
  }
  return rows
}

/** Rows as objects keyed by the header row. */
export function parseCsvObjects(text: string): Array<Record<string, string>> {
  const [header, ...rows] = parseCsv(text)
  if (!header) return []
  return rows.map((row) => {
    if (row.length !== header.length) throw new Error(`row has ${row.length} fields, header has ${header.length}`)
    return Object.fromEntries(header.map((name, i) => [name, row[i]!]))
  })
}

/**
 * Checks a CSV summary against the run it should describe, field by field
 * from the result object (not against another rendering of it, which a
 * broken renderer would match): one row per phase and per phase x replica,
 * with its counts, percentiles and hedging counters.
 */
export function assertCsvSummaryOf(text: string, result: RunResult): void {
  const rows = parseCsvObjects(text)
  const phases = Object.values(result.phases)
  assert.equal(
    rows.length,
    phases.reduce((n, p) => n + 1 + p.replicas.length, 0),
  )
  for (const phase of phases) {
    const row = rows.find((r) => r.scope === 'phase' && r.phase === phase.name)
    assert.ok(row, `a row for the ${phase.name} phase`)
    for (const key of ['requests', 'attempts', 'ok', 'errors', 'connectionsOpened'] as const) {
      assert.equal(Number(row[key === 'connectionsOpened' ? 'connections_opened' : key]), phase[key], `${phase.name} ${key}`)
    }
    for (const key of PERCENTILE_KEYS) assert.equal(Number(row[`${key}_ms`]), Number(phase.latencyMs[key].toFixed(3)), `${phase.name} ${key}`)
    assert.equal(row.hedges_sent, phase.hedging ? String(phase.hedging.hedgesSent) : '', `${phase.name} hedges sent`)
    for (const replica of phase.replicas) {
      const r = rows.find((x) => x.scope === 'replica' && x.phase === phase.name && x.replica === redactUrl(replica.url))
      assert.ok(r, `a row for ${replica.url} in ${phase.name}`)
      assert.equal(Number(r.requests), replica.requests)
      assert.equal(Number(r.wins), replica.wins)
    }
  }
}
