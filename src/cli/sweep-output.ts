/**
 * What a sweep writes: its -o output on stdout (text, JSON, CSV or HTML),
 * the saved JSON + CSV under --out-dir with the configs to deploy for the
 * recommended setting (or --emit-for), and --verify's grpc-js run of that
 * setting. Every renderer and file format is the report layer's.
 */
import { UsageError } from '../core/errors.js'
import type { RunResult } from '../results/run-result.js'
import type { SweepResult } from '../results/sweep-result.js'
import type { DeploySetting } from '../report/deploy-config.js'
import type { SweepFrontier } from '../report/sweep-frontier.js'
import type { SweepOptions } from '../run/sweep.js'

export const SWEEP_FORMATS = ['text', 'json', 'csv', 'html'] as const

export interface SweepOutputFlags {
  o: string
  outDir: string
  save: boolean
  emitFor?: string
  verify?: boolean
}

/** Before anything is sent: what the flags ask for can be done. `labels`: the settings the sweep will try. */
export async function checkSweepOutput(flags: SweepOutputFlags, urls: readonly string[], labels: readonly string[]): Promise<void> {
  if (flags.emitFor !== undefined) {
    if (!flags.save) throw new UsageError('--emit-for writes the configs under --out-dir: drop --no-save')
    if (!labels.includes(flags.emitFor)) throw new UsageError(`--emit-for "${flags.emitFor}" is not one of the settings (${labels.join(', ')})`)
  }
  if (flags.verify) (await import('../run/sweep-verify.js')).checkVerifiable(urls)
  if (flags.save) await (await import('../report/results-store.js')).assertWritableDir(flags.outDir)
}

export async function writeSweepOutputs(flags: SweepOutputFlags, options: SweepOptions, sweep: SweepResult, frontier: SweepFrontier): Promise<void> {
  const { deployFiles, settingToEmit } = await import('../report/deploy-config.js')
  const setting = settingToEmit(sweep, frontier.recommendation.label, flags.emitFor)
  // A mix: a recommendation per target, and the Envoy route a route per target (sweep-targets.ts).
  const mix = sweep.targets ? await import('../report/sweep-targets.js') : null
  const perTarget = mix ? mix.targetFrontiers(sweep, frontier.maxExtraPct) : []
  const routes = mix ? mix.targetsEnvoyFile(sweep, perTarget, flags.emitFor) : null
  const deploy = routes ? [...(setting ? deployFiles(setting).filter((f) => f.name !== routes.name) : []), routes] : setting ? deployFiles(setting) : []
  const verification = flags.verify ? await verify(options, setting, deploy) : null
  const extra = {
    ...(verification ? { verification: { label: setting!.label, result: verification } } : {}),
    ...(perTarget.length > 0 ? { targetFrontiers: perTarget } : {}),
  }
  process.stdout.write(await render(flags.o, sweep, frontier, extra))
  if (mix && flags.o === 'text') process.stdout.write(`${mix.targetsSweepText(perTarget).join('\n')}\n`)
  if (verification && setting) {
    const { renderVerifyText } = await import('../report/sweep-verify-text.js')
    // Beside the text, or on stderr when stdout holds a document (its JSON has the run).
    ;(flags.o === 'text' ? process.stdout : process.stderr).write(`\n${renderVerifyText(setting.label, verification)}`)
  }
  if (!flags.save) return
  if (sweep.settings.length === 0) {
    process.stderr.write('nothing saved: no setting finished\n')
    return
  }
  const { saveSweep } = await import('../report/sweep-store.js')
  const saved = await saveSweep(flags.outDir, sweep, frontier, deploy, extra)
  process.stderr.write(`saved ${saved.json} and ${saved.csv}\n`)
  if (saved.deployDir)
    process.stderr.write(`configs to deploy for ${setting?.label ?? 'each target'}: ${saved.deployDir}/ (${deploy.map((f) => f.name).join(', ')})\n`)
  else process.stderr.write('no configs to deploy: no setting is recommended (--emit-for SETTING writes them for one)\n')
}

async function render(format: string, sweep: SweepResult, frontier: SweepFrontier, extra: Record<string, unknown>): Promise<string> {
  if (format === 'json') return (await import('../report/sweep-store.js')).renderSweepJson(sweep, frontier, extra)
  if (format === 'csv') return (await import('../report/sweep-csv.js')).renderSweepCsv(sweep, frontier)
  if (format === 'html') return (await import('../report/sweep-html.js')).renderSweepHtml(sweep, frontier)
  return (await import('../report/sweep-text.js')).renderSweepText(sweep, frontier)
}

/** The chosen setting through grpc-js with the service config just written; null (with a line why) when there is nothing to verify. */
async function verify(options: SweepOptions, setting: DeploySetting | null, deploy: Array<{ name: string; text: string }>): Promise<RunResult | null> {
  const config = deploy.find((f) => f.name.endsWith('.json'))
  if (!setting || !config || options.signal?.aborted) {
    process.stderr.write(
      `--verify: nothing verified (${options.signal?.aborted ? 'the sweep was interrupted' : 'no setting is recommended; --emit-for SETTING names one'})\n`,
    )
    return null
  }
  process.stderr.write(`--verify: ${setting.label} through grpc-js with ${config.name}, on the same replicas\n`)
  const { verifySetting } = await import('../run/sweep-verify.js')
  return verifySetting(options, setting, JSON.parse(config.text))
}
