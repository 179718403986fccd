/**
 * What a sweep writes: its -o output on stdout (text, JSON, CSV or HTML),
 * the saved JSON + CSV under --out-dir with the configs to deploy for the
 * recommended setting (or --emit-for), and --verify's grpc-js run of that
 * setting. Every renderer and file format is the report layer's.
 */
import { dirname } from 'node:path'
import { UsageError } from '../core/errors.js'
import type { RunResult } from '../results/run-result.js'
import { type SweepResult, type SweepVerification, verifiedRuns } from '../results/sweep-result.js'
import type { DeploySetting } from '../report/deploy-config.js'
import type { SweepFrontier } from '../report/sweep-frontier.js'
import type { SweepOptions } from '../run/sweep.js'
import { fitStdout, stdoutColumns, stdoutTaken, writePage, writeStderrLine } from './output.js'

export const SWEEP_FORMATS = ['text', 'json', 'csv', 'html'] as const

export interface SweepOutputFlags {
  o: string
  /** --html FILE: the page written there as well (- : to stdout, instead of -o). */
  html?: string
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
  const { assertWritableDir } = await import('../report/results-store.js')
  if (flags.save) await assertWritableDir(flags.outDir)
  if (flags.html !== undefined && !stdoutTaken(flags.html)) {
    await assertWritableDir(dirname(flags.html)).catch((err: Error) => {
      throw err instanceof UsageError ? new UsageError(`--html "${flags.html}": ${err.message}`) : err
    })
  }
}

export async function writeSweepOutputs(flags: SweepOutputFlags, options: SweepOptions, measured: SweepResult, frontier: SweepFrontier): Promise<void> {
  const { deployFiles, settingToEmit } = await import('../report/deploy-config.js')
  const setting = settingToEmit(measured, frontier.recommendation.label, flags.emitFor)
  // A mix: a recommendation per target, the Envoy route a route per target, a mix of gRPC methods a methodConfig per method (sweep-targets.ts).
  const mix = measured.targets ? await import('../report/sweep-targets.js') : null
  const perTarget = mix ? mix.targetFrontiers(measured, frontier.maxExtraPct) : []
  // Targets left out of the configs (no measured delay) and targets sharing a route: said in the configs and among the sweep's warnings.
  const notes = mix ? mix.unmeasuredNotes(measured, perTarget, flags.emitFor) : []
  const shared = mix ? mix.sharedRouteWarnings(measured, perTarget, flags.emitFor) : []
  const sweep = notes.length + shared.length > 0 ? { ...measured, warnings: [...measured.warnings, ...notes, ...shared] } : measured
  const routes = mix ? mix.targetsEnvoyFile(sweep, perTarget, flags.emitFor, notes) : null
  const methods = mix && sweep.run.config.grpc ? mix.targetMethods(sweep, perTarget, flags.emitFor) : null
  const own = [...(routes ? [routes] : []), ...(methods ? mix!.targetsGrpcFiles(methods, perTarget.length, notes) : [])]
  // The merged setting's files, but those a mix writes per target (and a mix of methods' service config: it names every method in one;
  // and none of a mix's routes or service config when a target's delay was not measured: the merged one would deploy it anyway).
  const perTargetOnly = (name: string): boolean =>
    (methods !== null || notes.length > 0) && (name.startsWith('grpc-service-config') || (notes.length > 0 && name === 'envoy-route.yaml'))
  const merged = setting ? deployFiles(setting).filter((f) => !own.some((o) => o.name === f.name) && !perTargetOnly(f.name)) : []
  const deploy = [...merged, ...own]
  const verification = flags.verify && !methods ? await verify(options, setting, deploy) : null
  const verifications = flags.verify && methods ? await verifyMethods(options, methods, deploy) : []
  const extra = {
    ...(verification ? { verification: { label: setting!.label, result: verification } } : {}),
    ...(verifications.length > 0 ? { verifications } : {}),
    ...(perTarget.length > 0 ? { targetFrontiers: perTarget } : {}),
  }
  if (flags.html !== undefined) await writeSweepHtml(flags.html, sweep, frontier)
  if (!stdoutTaken(flags.html)) {
    process.stdout.write(await renderSweep(flags.o, sweep, frontier, extra))
  }
  await writeVerified(verifiedRuns(extra), flags.o, flags.html)
  if (!flags.save) return
  if (sweep.settings.length === 0) {
    writeStderrLine('nothing saved: no setting finished')
    return
  }
  const { saveSweep } = await import('../report/sweep-store.js')
  const saved = await saveSweep(flags.outDir, sweep, frontier, deploy, extra)
  writeStderrLine(`saved ${saved.json} and ${saved.csv}`)
  if (saved.deployDir)
    writeStderrLine(`configs to deploy for ${setting?.label ?? 'each target'}: ${saved.deployDir}/ (${deploy.map((f) => f.name).join(', ')})`)
  else writeStderrLine('no configs to deploy: no setting is recommended (--emit-for SETTING writes them for one)')
}

/** --verify's comparisons in words: beside the text, or on stderr when stdout holds a document (its JSON has the runs); the sweep's and `report`'s of a saved one. */
export async function writeVerified(verified: readonly SweepVerification[], format: string, html: string | undefined): Promise<void> {
  if (verified.length === 0) return
  const { renderVerifyText } = await import('../report/sweep-verify-text.js')
  const out = format === 'text' && !stdoutTaken(html) ? process.stdout : process.stderr
  for (const v of verified) out.write(`\n${fitStdout(renderVerifyText(v.label, v.result))}`)
}

/** The sweep's page, to a file or to stdout (`-`), as a run's --html. */
export async function writeSweepHtml(path: string, sweep: SweepResult, frontier: SweepFrontier): Promise<void> {
  const { renderSweepHtml } = await import('../report/sweep-html.js')
  await writePage(path, renderSweepHtml(sweep, frontier))
}

/** A sweep in one of SWEEP_FORMATS: the command's -o, and `report` of a saved sweep. */
export async function renderSweep(format: string, sweep: SweepResult, frontier: SweepFrontier, extra: Record<string, unknown>): Promise<string> {
  if (format === 'json') return (await import('../report/sweep-store.js')).renderSweepJson(sweep, frontier, extra)
  if (format === 'csv') return (await import('../report/sweep-csv.js')).renderSweepCsv(sweep, frontier)
  if (format === 'html') return (await import('../report/sweep-html.js')).renderSweepHtml(sweep, frontier)
  return fitStdout((await import('../report/sweep-text.js')).renderSweepText(sweep, frontier, stdoutColumns()))
}

/**
 * A mix of gRPC methods: each method's setting through grpc-js with the one
 * service config just written (grpc-js applies each method's methodConfig),
 * one after the other, each sending its first target's message; none (with
 * a line why) when no method has a setting.
 */
async function verifyMethods(
  options: SweepOptions,
  methods: ReadonlyArray<{ call: string; setting: DeploySetting; target: number }>,
  deploy: Array<{ name: string; text: string }>,
): Promise<Array<{ call: string; label: string; result: RunResult }>> {
  const config = deploy.find((f) => f.name === 'grpc-service-config.json')
  if (!config || methods.length === 0 || options.signal?.aborted) {
    process.stderr.write(
      `--verify: nothing verified (${options.signal?.aborted ? 'the sweep was interrupted' : 'no method has a recommended setting; --emit-for SETTING names one'})\n`,
    )
    return []
  }
  const { verifyTarget } = await import('../run/sweep-verify.js')
  const out: Array<{ call: string; label: string; result: RunResult }> = []
  for (const { call, setting, target } of methods) {
    if (options.signal?.aborted) break
    writeStderrLine(`--verify: ${call} at ${setting.label} through grpc-js with ${config.name}, on the same replicas`)
    out.push({ call, label: setting.label, result: await verifyTarget(options, target, setting, JSON.parse(config.text)) })
  }
  return out
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
  writeStderrLine(`--verify: ${setting.label} through grpc-js with ${config.name}, on the same replicas`)
  const { verifySetting } = await import('../run/sweep-verify.js')
  return verifySetting(options, setting, JSON.parse(config.text))
}
