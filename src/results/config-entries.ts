/**
 * A run's configuration as flat "dotted.key" → text pairs, for listing it
 * (HTML report) and for spotting differences between runs (compare).
 * Walking the object, rather than naming fields, keeps new config fields
 * listed without touching this file.
 */
import type { RunConfig } from './run-result.js'

export function configEntries(config: RunConfig): Map<string, string> {
  return flatten(config, '', new Map())
}

function flatten(value: unknown, prefix: string, out: Map<string, string>): Map<string, string> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out)
  } else if (prefix) {
    out.set(prefix, Array.isArray(value) ? value.map(String).join(', ') : String(value))
  }
  return out
}

/**
 * A flattened value as a person reads it: a stored null is a setting left
 * unset ("none"), and the request count of a timed run (-z) is null because
 * the run had none to reach, not because it lost it.
 */
export function readableConfigValue(key: string, text: string): string {
  if (text !== 'null' && text !== '' && text !== 'undefined') return FRACTIONS.has(key) ? `${Number((Number(text) * 100).toPrecision(6))}%` : text
  return key === 'requests' ? 'timed (-z)' : 'none'
}

/** Stored as a fraction, typed as a percentage (--suppress-at-error-rate 25%). */
const FRACTIONS = new Set(['saturation.maxErrorRate'])
