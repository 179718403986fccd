#!/usr/bin/env node
/**
 * Runs the given built test files in this one process (node:test runs the tests a module registers
 * when it is not under `node --test`): one Node start-up for a mutant run instead of one per file
 * (scripts/mutate.mjs). Exits non-zero when a test fails, as node:test sets it.
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

for (const file of process.argv.slice(2)) await import(pathToFileURL(resolve(file)).href)
