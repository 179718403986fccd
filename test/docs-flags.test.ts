/**
 * docs/flags.md is generated from each command's --help (npm run docs:flags,
 * scripts/flags-doc.mjs): the committed page must be what the current build
 * prints, so a flag added, renamed or re-described without regenerating the
 * page fails here.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'

const SCRIPT = new URL('../../scripts/flags-doc.mjs', import.meta.url).href

test('docs/flags.md is what --help prints for every command (regenerate with npm run docs:flags)', async () => {
  const { flagsPage, FLAGS_PAGE, COMMANDS } = (await import(SCRIPT)) as { flagsPage(): Promise<string>; FLAGS_PAGE: string; COMMANDS: string[][] }
  const page = await flagsPage()
  // One block per command, each with its options: a help that came back empty would prove nothing.
  assert.equal(page.match(/^```text$/gm)?.length, COMMANDS.length)
  for (const flag of ['--hedge-delay', '--fail-if', '--allow-partial', '--replicas']) assert.ok(page.includes(flag), flag)
  assert.equal(readFileSync(FLAGS_PAGE, 'utf8'), page, 'docs/flags.md is stale: run npm run docs:flags')
})
