/**
 * A saved sweep: `<stem>-sweep.json` (the settings' runs and the frontier),
 * `<stem>-sweep.csv` (one row per setting; a mix's also per target and
 * setting) and, for the setting to deploy, `<stem>-sweep-deploy/` with one
 * file per config (deploy-config.ts). Never overwrites: a taken name gets
 * `-2`, `-3`, ... as a run's files do.
 */
import { mkdir, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { makeDirs } from '../core/make-dirs.js'
import { savedSweepValue, type SweepResult } from '../results/sweep-result.js'
import { VERSION } from '../core/version.js'
import type { DeployFile } from './deploy-config.js'
import { resultFileStem, writeFileAtomic } from './results-store.js'
import { renderSweepCsv } from './sweep-csv.js'
import type { SweepFrontier } from './sweep-frontier.js'

export interface SavedSweep {
  json: string
  csv: string
  /** The folder of the deploy files; null when none were written. */
  deployDir: string | null
}

/** The sweep with its frontier, after its schema and version: what -o json prints and the saved `.json` holds (results/sweep-result.ts reads it back). */
export function renderSweepJson(sweep: SweepResult, frontier: SweepFrontier, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify(savedSweepValue(sweep, VERSION, { frontier, ...extra }), null, 2)}\n`
}

export async function saveSweep(
  outDir: string,
  sweep: SweepResult,
  frontier: SweepFrontier,
  deploy: DeployFile[],
  extra: Record<string, unknown> = {},
): Promise<SavedSweep> {
  const stem = `${resultFileStem(sweep.run)}-sweep`
  await makeDirs(outDir)
  for (let n = 1; n < 10_000; n++) {
    const base = join(outDir, n === 1 ? stem : `${stem}-${n}`)
    const deployDir = deploy.length > 0 ? `${base}-deploy` : null
    try {
      await writeFileAtomic(`${base}.json`, renderSweepJson(sweep, frontier, extra), { overwrite: false })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue
      throw err
    }
    // The JSON's name is ours; a folder of that name left by someone else gives both up.
    if (deployDir !== null && !(await claimDir(deployDir))) {
      await unlink(`${base}.json`).catch(() => undefined)
      continue
    }
    await writeFileAtomic(`${base}.csv`, renderSweepCsv(sweep, frontier), { overwrite: true })
    for (const file of deploy) await writeFileAtomic(join(deployDir!, file.name), file.text, { overwrite: true })
    return { json: `${base}.json`, csv: `${base}.csv`, deployDir }
  }
  throw new Error(`cannot save the sweep in "${outDir}": too many files named ${stem}-*`)
}

async function claimDir(path: string): Promise<boolean> {
  try {
    await mkdir(path)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
}
