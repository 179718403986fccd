/**
 * A misspelt flag gets the nearest valid one, in every command, from that
 * command's own flags: one line, exit 2, nothing run. Nothing is suggested
 * when nothing is close, nor a flag the command does not take.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { editDistance, nearestName } from '../src/cli/nearest-flag.js'
import { runMainCases } from './helpers/main-cases.js'

test('edit distance: a swap of neighbours is one slip, as an insertion, a deletion or a substitution', () => {
  assert.equal(editDistance('hedge-dealy', 'hedge-delay'), 1)
  assert.equal(editDistance('outptu', 'output'), 1)
  assert.equal(editDistance('prot', 'port'), 1)
  assert.equal(editDistance('fail-iff', 'fail-if'), 1)
  assert.equal(editDistance('concurency', 'concurrency'), 1)
  assert.equal(editDistance('http3', 'http2'), 1)
  assert.equal(editDistance('', 'abc'), 3)
  assert.equal(editDistance('abc', 'abc'), 0)
  assert.equal(editDistance('ca', 'abc'), 3)
})

test('nearest name: the closest within about one slip per three letters, first declared on a tie, none for one or two letters', () => {
  assert.equal(nearestName('hedge-dealy', ['hedge-budget', 'hedge-delay', 'max-attempts']), 'hedge-delay')
  assert.equal(nearestName('protx', ['port', 'profile']), undefined)
  assert.equal(nearestName('prot', ['port', 'profile']), 'port')
  assert.equal(nearestName('ab', ['a', 'b', 'ac']), undefined)
  assert.equal(nearestName('bogus-thing', ['hedge-delay', 'output']), undefined)
  assert.equal(nearestName('sead', ['seed', 'send']), 'seed')
})

const NOWHERE = 'http://127.0.0.1:1/'

/** [command line, the one stderr line]: a misspelling of each command's own flag, and what is never suggested. */
const CASES: Array<[string[], string]> = [
  [['--hedge-dealy', '5ms', NOWHERE], 'unknown option --hedge-dealy; did you mean --hedge-delay?'],
  [['run', '--concurency', '4', NOWHERE], 'unknown option --concurency; did you mean --concurrency?'],
  [['--no-ejct', NOWHERE], 'unknown option --no-ejct; did you mean --no-eject?'],
  [['--hedge-delay=5ms', '--hegde-budget=3', NOWHERE], 'unknown option --hegde-budget; did you mean --hedge-budget?'],
  [['compare', 'a.json', '--fail-iff', 'p99>+10%'], 'unknown option --fail-iff; did you mean --fail-if?'],
  [['report', 'a.json', '--outptu', 'json'], 'unknown option --outptu; did you mean --output?'],
  [['merge', 'a.json', '--otu', 'm.json'], 'unknown option --otu; did you mean --out?'],
  [['sweep', '--hedge-dealy', 'p90', NOWHERE], 'unknown option --hedge-dealy; did you mean --hedge-delay?'],
  [['serve', '--profile', 'pi', '--prot', '8080'], 'unknown option --prot; did you mean --port?'],
  // The required flag itself misspelt: yargs would say it is missing; the misspelling is what to fix.
  [['serve', '--profil', 'pi'], 'unknown option --profil; did you mean --profile?'],
  [['demo', '--htpp2'], 'unknown option --htpp2; did you mean --http2?'],
  [
    ['--hedge-dealy', '1', '--concurency', '3', NOWHERE],
    'unknown arguments --hedge-dealy (did you mean --hedge-delay?), --concurency (did you mean --concurrency?) (see hedgebench --help for the valid options)',
  ],
  // Nothing close; a run's flag is not a report's; a hidden flag (refused with its reason) is never offered.
  [['--bogus-thing', 'x', NOWHERE], 'unknown argument --bogus-thing (see hedgebench --help for the valid options)'],
  [['report', 'a.json', '--hedge-dealy', '5ms'], 'unknown argument --hedge-dealy (see hedgebench --help for the valid options)'],
  [['sweep', '--workres', '2', NOWHERE], 'unknown argument --workres (see hedgebench --help for the valid options)'],
  [['merge', 'a.json', '--ot', 'm.json'], 'unknown argument --ot (see hedgebench --help for the valid options)'],
]

test('a misspelt flag gets the nearest valid one of its own command, in every command: one line, exit 2', () => {
  const runs = runMainCases(CASES.map(([args]) => ({ args, cwd: process.cwd() })))
  for (const [i, [args, line]] of CASES.entries()) {
    const r = runs[i]!
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    assert.equal(r.stderr, `hedgebench: ${line}\n`, args.join(' '))
    assert.equal(r.stdout, '', args.join(' '))
  }
})
