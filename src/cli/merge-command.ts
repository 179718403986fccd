/**
 * `hedgebench merge FILE… | --from-logs -`: the shards of one run into one
 * result (stats/result-merge.ts), rendered like a run's. Refusals (another
 * run, another config, a missing or repeated shard, mixed precision) are
 * one-line usage errors, exit 2.
 */
import { constants, createReadStream } from 'node:fs'
import { access } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import type { CommandModule } from 'yargs'
import { UsageError } from '../core/errors.js'
import type { MergeInput } from '../stats/result-merge.js'
import { MAX_RESULT_SIZE_OPTION, maxResultMb } from './result-size-flag.js'
import { OUTPUT_FORMATS, renderOutput, stdoutColor, writeHtmlReport, type OutputFormat } from './output.js'

interface MergeArgs {
  files?: string[]
  output: OutputFormat
  html?: string
  out?: string
  fromLogs?: string
  allowPartial?: boolean
  maxResultSize?: number
}

export function mergeCommand(setExitCode: (code: number) => void): CommandModule<object, MergeArgs> {
  return {
    command: 'merge [files..]',
    describe: 'merge the shards of one run (--shard) into one exact result',
    builder: (yargs) =>
      yargs
        .positional('files', { type: 'string', array: true, describe: 'result files of the shards (results/...json), or earlier merges of them' })
        .option('output', { alias: 'o', requiresArg: true, choices: OUTPUT_FORMATS, default: 'text' as OutputFormat, describe: 'format printed to stdout' })
        .option('html', { type: 'string', requiresArg: true, describe: 'also write a self-contained HTML report to this file' })
        .option('out', { type: 'string', requiresArg: true, describe: 'also write the merged result as JSON to this file (report/compare read it)' })
        .option('from-logs', {
          type: 'string',
          requiresArg: true,
          describe: 'read framed results (run --frames) from this log file, - for stdin (kubectl logs ... --prefix | ...)',
        })
        .option('allow-partial', { type: 'boolean', describe: 'merge what is there when shards are missing, and say what is missing' })
        .option('max-result-size', MAX_RESULT_SIZE_OPTION)
        .example('$0 merge results/*-shard-*.json --out merged.json', 'merge saved shard results')
        .example('kubectl logs -l job-name=hedgebench --tail=-1 --prefix --max-log-requests=8 | $0 merge --from-logs -', 'merge what the pods printed'),
    handler: async (argv) => {
      // Loaded here, not at start-up: every other command (and --help) goes without the CSV and JSON writers.
      const [{ loadResult, writeOutputFile }, { renderJson }] = await Promise.all([import('../report/results-store.js'), import('../results/result-json.js')])
      const inputs: MergeInput[] = []
      const maxMb = maxResultMb(argv.maxResultSize)
      for (const file of argv.files ?? []) inputs.push({ result: await loadResult(file, maxMb), source: file })
      if (argv.fromLogs !== undefined) inputs.push(...(await readLogs(argv.fromLogs)))
      if (inputs.length === 0) throw new UsageError("nothing to merge: give result files, or --from-logs - with the pods' logs on stdin")
      const { mergeResults } = await import('../stats/result-merge.js')
      const merged = mergeResults(inputs, { allowPartial: argv.allowPartial ?? false })
      if (argv.out !== undefined) await writeOutputFile(argv.out, renderJson(merged), '--out')
      if (argv.html !== undefined) await writeHtmlReport(argv.html, [merged])
      process.stdout.write(await renderOutput(merged, argv.output, stdoutColor()))
      setExitCode(0)
    },
  }
}

async function readLogs(path: string): Promise<MergeInput[]> {
  if (path !== '-')
    await access(path, constants.R_OK).catch((err: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read --from-logs "${path}": ${err.code ?? err.message}`)
    })
  const stream: Readable = path === '-' ? process.stdin : createReadStream(path)
  const { FrameCollector } = await import('../results/result-frames.js')
  const collector = new FrameCollector()
  for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) collector.add(line)
  const results = collector.results()
  if (results.length === 0)
    throw new UsageError(
      `no hedgebench frames in ${path === '-' ? 'stdin' : path} (${collector.lines} lines): were the pods run with --frames, and the logs read with --tail=-1?`,
    )
  return results.map((result) => ({
    result,
    source: `run ${result.runId ?? '?'} shard ${result.shard ? `${result.shard.index}/${result.shard.count}` : '0/1'} (from logs)`,
  }))
}
