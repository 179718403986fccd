/**
 * The valid flag a misspelt one was most likely meant to be
 * (`--hedge-dealy` -> `--hedge-delay`), among the command's own option
 * names and aliases only, so a suggestion is always a flag the command
 * takes. Nothing is suggested when nothing is close: a wrong guess costs
 * the user more than none.
 */

/**
 * Damerau-Levenshtein distance (optimal string alignment): insertions,
 * deletions, substitutions and a swap of two neighbours each cost 1. The
 * swap matters: typing two letters in the wrong order is the commonest slip.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1)
      d[i]![j] = best
    }
  }
  return d[a.length]![b.length]!
}

/**
 * How far a typed name may be from a suggestion: about one slip per three
 * letters, at most 3; none for one or two letters, where every short flag
 * would be one slip away from every other.
 */
const tolerance = (typed: string): number => Math.min(3, Math.floor(typed.length / 3))

/** The closest of `names` to `typed` (first declared on a tie), or undefined when none is within tolerance. */
export function nearestName(typed: string, names: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = tolerance(typed) + 1
  for (const name of names) {
    const distance = editDistance(typed, name)
    if (distance < bestDistance) {
      best = name
      bestDistance = distance
    }
  }
  return best
}

/** What yargs holds about a command's options once its builder ran (`getOptions()`), the part read here. */
export interface DeclaredOptions {
  key: Record<string, unknown>
  alias: Record<string, string[]>
  boolean: string[]
  hiddenOptions: string[]
}

/**
 * The valid flag nearest to one typed (`--hedge-dealy`, `--no-ejct`, as on
 * the command line), written as it would be typed, or undefined. Hidden
 * options are never suggested: they exist to be refused with a reason.
 */
export function nearestFlag(typed: string, options: DeclaredOptions): string | undefined {
  const hidden = new Set(options.hiddenOptions.flatMap((k) => [k, ...(options.alias[k] ?? [])]))
  const names = Object.keys(options.key).filter((k) => !hidden.has(k))
  const negated = /^--no-(.+)$/.exec(typed)
  if (negated) {
    const switches = options.boolean.filter((k) => !hidden.has(k) && k.length > 1)
    const name = nearestName(negated[1]!, switches)
    if (name !== undefined) return `--no-${name}`
  }
  const name = nearestName(typed.replace(/^--?/, ''), names)
  return name === undefined ? undefined : flagName(name)
}

export const flagName = (name: string): string => (name.length === 1 ? `-${name}` : `--${name}`)
