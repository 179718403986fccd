/**
 * deploy/kubernetes, checked offline: rendered with `kubectl kustomize` (no
 * cluster needed) and validated against the Kubernetes schema with
 * kubernetes-models (4.x: runs on Node 20). Then what the schema cannot
 * know: N is the same in the Job and in the pods' --shard, the pods read the
 * generated ConfigMaps, and that config is flags the CLI accepts. The files
 * themselves (what `kubectl kustomize deploy/kubernetes` renders, the image's
 * placeholder registry, the start written at apply time, a pod's run from
 * the example's run.json) are checked without kubectl too.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parse, parseAllDocuments } from 'yaml'
import { Job } from 'kubernetes-models/batch/v1/Job'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { YOUNG_GENERATION_FLAGS } from '../src/cli/launcher.js'
import { startCli } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { runMergeWithStdin } from './helpers/merge-cli.js'
import { skipWithout } from './helpers/required-tool.js'
import { startServer } from './helpers/servers.js'

const exec = promisify(execFile)
const DEPLOY = fileURLToPath(new URL('../../deploy/kubernetes/', import.meta.url))
const DOCS = fileURLToPath(new URL('../../docs/shards-and-kubernetes.md', import.meta.url))
const KUBECTL = 'kubectl'

let kubectlFound: Promise<boolean> | undefined
/** Why the kubectl tests skip, or false to run them (HEDGEBENCH_REQUIRE_TOOLS=kubectl makes a missing kubectl fail them: .ci/run). */
async function withoutKubectl(): Promise<string | false> {
  kubectlFound ??= exec(KUBECTL, ['version', '--client'], { timeout: 10_000 }).then(
    () => true,
    () => false,
  )
  return skipWithout(await kubectlFound, 'kubectl', 'kubectl not found: cannot render the kustomization (install kubectl 1.27 or later)')
}

interface Rendered {
  job: Job
  configMap: ConfigMap
  start: ConfigMap
}

async function render(dir: string): Promise<Rendered> {
  const { stdout } = await exec(KUBECTL, ['kustomize', join(DEPLOY, dir)], { timeout: 20_000 })
  const docs = parseAllDocuments(stdout).map((d) => d.toJS() as { kind: string })
  assert.deepEqual(docs.map((d) => d.kind).sort(), ['ConfigMap', 'ConfigMap', 'Job'])
  const job = new Job(docs.find((d) => d.kind === 'Job') as never)
  const maps = docs.filter((d) => d.kind === 'ConfigMap').map((d) => new ConfigMap(d as never))
  const configMap = maps.find((m) => m.data?.['run.json'] !== undefined)!
  const start = maps.find((m) => m.data?.START_AT !== undefined)!
  job.validate()
  for (const m of maps) m.validate()
  return { job, configMap, start }
}

for (const dir of ['base', 'overlays/example', '.']) {
  test(`${dir}: an Indexed Job of N pods that each run shard auto/N, valid against the Kubernetes schema`, async (t) => {
    const skip = await withoutKubectl()
    if (skip) return t.skip(skip)
    const { job, configMap, start } = await render(dir)
    const spec = job.spec!
    const config = JSON.parse(configMap.data!['run.json']!) as Record<string, unknown>
    const n = Number(/^auto\/(\d+)$/.exec(String(config.shard))![1])
    assert.equal(spec.completionMode, 'Indexed')
    assert.equal(spec.completions, n, 'completions = N of --shard auto/N')
    assert.equal(spec.parallelism, n, 'parallelism = N: every shard runs at once')
    assert.equal(spec.backoffLimit, 0, 'a retried pod would start after the agreed time')
    assert.ok(spec.activeDeadlineSeconds! > 0 && spec.ttlSecondsAfterFinished! > 0)
    const pod = spec.template.spec!
    assert.equal(pod.restartPolicy, 'Never')
    assert.ok(
      pod.topologySpreadConstraints!.some((c) => c.topologyKey === 'kubernetes.io/hostname'),
      'spread over nodes',
    )
    const container = pod.containers[0]!
    assert.deepEqual(container.resources!.requests, container.resources!.limits, 'requests = limits')
    assert.deepEqual(container.args, ['--config', '/etc/hedgebench/run.json', '--start-at', '$(START_AT)'])
    const env = container.env!.find((e) => e.name === 'START_AT')!
    assert.equal(env.valueFrom!.configMapKeyRef!.name, start.metadata!.name, 'START_AT from the generated start ConfigMap (hash suffix included)')
    const volume = pod.volumes!.find((v) => v.name === container.volumeMounts![0]!.name)!
    assert.equal(volume.configMap!.name, configMap.metadata!.name, 'the pods mount the generated ConfigMap (hash suffix included)')
    assert.equal(config.frames, true, 'results leave the pods as framed log lines')
    assert.equal(config['start-at'], undefined, 'the start is written at apply time, not shipped in run.json')
    if (dir !== 'base') assert.match(container.image!, /^registry\.example\.invalid\/hedgebench:/)
  })
}

test('the schema check has teeth: a misspelt completionMode is rejected', async (t) => {
  const skip = await withoutKubectl()
  if (skip) return t.skip(skip)
  const { job } = await render('base')
  const broken = new Job({ ...job.toJSON(), spec: { ...job.spec!, completionMode: 'Indxed' } } as never)
  assert.throws(() => broken.validate(), /completionMode/)
})

/**
 * Pod 1 of the example as the Job starts it (`--config run.json --start-at $(START_AT)`, JOB_COMPLETION_INDEX=1),
 * with the cluster's URLs and size swapped for a short run against a local target; every other flag as shipped.
 */
async function runPod1(t: TestContext, shipped: Record<string, unknown>, startAt: string): Promise<void> {
  const server = await startServer({ delayMs: 1 })
  const dir = await mkdtemp(join(tmpdir(), 'hedgebench-k8s-'))
  t.after(async () => {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  })
  const file = join(dir, 'run.json')
  await writeFile(file, JSON.stringify({ ...shipped, urls: [server.url, server.url.replace('127.0.0.1', 'localhost')], z: '300ms', q: '80', warmup: '10' }))
  const r = await runMain(['--config', file, '--start-at', startAt], { env: { JOB_COMPLETION_INDEX: '1' }, timeoutMs: 40_000 })
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /Shard: shard 1\/8 · run checkout-2026-12-01-run1/)
  assert.match(r.stdout, /HBFRAME1 checkout-2026-12-01-run1 1\/8 1\/\d+ /)
}

test("the ConfigMap's run.json is flags the CLI accepts: pod 1 of the example runs its share against a local target", async (t) => {
  const skip = await withoutKubectl()
  if (skip) return t.skip(skip)
  const { configMap } = await render('overlays/example')
  await runPod1(t, JSON.parse(configMap.data!['run.json']!) as Record<string, unknown>, '+0s')
})

// Without kubectl: the files as kustomize reads them.
const yamlOf = async (path: string) => parse(await readFile(join(DEPLOY, path), 'utf8')) as Record<string, unknown>

test('kubectl kustomize deploy/kubernetes renders the example: the top-level kustomization is the example overlay', async () => {
  assert.deepEqual((await yamlOf('kustomization.yaml')).resources, ['overlays/example'])
  assert.deepEqual((await yamlOf('overlays/example/kustomization.yaml')).resources, ['../../base'])
})

test('the example overlay names its image under a placeholder registry that cannot resolve', async () => {
  const job = (await yamlOf('base/job.yaml')) as { spec: { template: { spec: { containers: Array<{ image: string }> } } } }
  const image = job.spec.template.spec.containers[0]!.image
  const overlay = (await yamlOf('overlays/example/kustomization.yaml')) as { images: Array<{ name: string; newName: string }> }
  assert.equal(overlay.images.length, 1)
  assert.equal(image.split(':')[0], overlay.images[0]!.name, 'images: names the base image, so kustomize replaces it')
  assert.match(overlay.images[0]!.newName, /^[\w.-]+\.invalid\/hedgebench$/, 'a .invalid registry never resolves (RFC 6761)')
})

test('the start is written at apply time: every pod reads START_AT from one generated ConfigMap, and the shipped placeholder is refused', async () => {
  const job = (await yamlOf('base/job.yaml')) as {
    spec: {
      template: { spec: { containers: Array<{ args: string[]; env: Array<{ name: string; valueFrom: { configMapKeyRef: { name: string; key: string } } }> }> } }
    }
  }
  const container = job.spec.template.spec.containers[0]!
  assert.deepEqual(container.args.slice(-2), ['--start-at', '$(START_AT)'])
  const env = container.env.find((e) => e.name === 'START_AT')!
  assert.deepEqual(env.valueFrom.configMapKeyRef, { name: 'hedgebench-start', key: 'START_AT' })
  for (const k of ['base/kustomization.yaml', 'overlays/example/kustomization.yaml']) {
    const gen = ((await yamlOf(k)) as { configMapGenerator: Array<{ name: string; envs?: string[] }> }).configMapGenerator
    assert.deepEqual(gen.find((g) => g.name === 'hedgebench-start')!.envs, ['start.env'], k)
  }
  for (const f of ['base/start.env', 'overlays/example/start.env']) {
    const value = /^START_AT=(.*)$/m.exec(await readFile(join(DEPLOY, f), 'utf8'))![1]!
    // A forgotten start.env must not run at once in the past: it is bad input, one line, exit 2.
    const r = await runMain(['http://127.0.0.1:9/', '--start-at', value, '--no-save'], { timeoutMs: 40_000 })
    assert.equal(r.code, 2, `${f}: ${r.stderr}`)
    assert.match(r.stderr, /^hedgebench: invalid --start-at "set-me-at-apply-time"[^\n]*\n$/)
  }
  for (const f of ['base/run.json', 'overlays/example/run.json']) {
    assert.equal((JSON.parse(await readFile(join(DEPLOY, f), 'utf8')) as Record<string, unknown>)['start-at'], undefined, `${f} has no start of its own`)
  }
})

test('pod 1 of the example, as the Job starts it (its run.json, --start-at from START_AT), runs its share against a local target', async (t) => {
  const shipped = JSON.parse(await readFile(join(DEPLOY, 'overlays/example/run.json'), 'utf8')) as Record<string, unknown>
  // START_AT as the documented one-liner writes it: an absolute UTC time to the second.
  const startAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 2000).toISOString().replace(/\.\d+Z$/, 'Z')
  await runPod1(t, shipped, startAt)
})

/** The lines of the ```sh block of docs/shards-and-kubernetes.md that goes from a clone to the merged report. */
async function documentedSequence(): Promise<string[]> {
  const page = await readFile(DOCS, 'utf8')
  const open = page.indexOf('```sh\n', page.indexOf('The whole sequence, from a clone to the merged report'))
  assert.ok(open > 0, 'docs/shards-and-kubernetes.md has the whole sequence in one block')
  return page.slice(open + 6, page.indexOf('\n```', open + 6)).split('\n')
}

test('the documented sequence runs as written, all but the cluster: the overlay copied, the start written, rendered, two pods, their logs merged, the report', async (t) => {
  const skip = await withoutKubectl()
  if (skip) return t.skip(skip)
  const lines = await documentedSequence()
  const line = (re: RegExp): string => {
    const found = lines.find((l) => re.test(l))
    assert.ok(found, `the sequence has a line ${re}`)
    return found
  }
  const server = await startServer({ delayMs: 1 })
  const root = await mkdtemp(join(tmpdir(), 'hedgebench-k8s-seq-'))
  t.after(async () => {
    await server.close()
    await rm(root, { recursive: true, force: true })
  })
  // A clone's deploy/kubernetes, where step 2 copies the example overlay and enters the copy.
  await cp(DEPLOY, join(root, 'deploy/kubernetes'), { recursive: true })
  const sh = (command: string, cwd: string) => exec('sh', ['-c', command], { cwd, timeout: 30_000 })
  await sh(line(/^cp -r deploy\/kubernetes\/overlays\/example /), root)
  const dir = join(root, /^cd (\S+)$/.exec(line(/^cd /))![1]!)
  const render = async () => {
    // Step 3's apply, rendered instead: what `kubectl apply -k .` would send.
    assert.ok(lines.includes('kubectl apply -k .'))
    const { stdout } = await exec(KUBECTL, ['kustomize', '.'], { cwd: dir, timeout: 20_000 })
    const docs = parseAllDocuments(stdout).map((d) => d.toJS() as { kind: string; data?: Record<string, string> })
    const job = new Job(docs.find((d) => d.kind === 'Job') as never)
    const data = (key: string) => docs.find((d) => d.kind === 'ConfigMap' && d.data?.[key] !== undefined)!.data![key]!
    return { job, runJson: data('run.json'), startAt: data('START_AT') }
  }

  // Step 3 as written: the agreed start a few minutes ahead, to the second, in UTC; hedgebench takes it as --start-at.
  await sh(line(/^echo "START_AT=/), dir)
  const documented = await render()
  assert.match(documented.startAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  const ahead = Date.parse(documented.startAt) - Date.now()
  assert.ok(ahead > 60_000 && ahead <= 181_000, `START_AT ${documented.startAt} is ${ahead} ms ahead`)
  const name = documented.job.metadata!.name!
  const n = documented.job.spec!.completions!
  // Steps 3 and 4 name the Job the copied overlay renders, and ask for the logs of all its pods.
  assert.ok(lines.includes(`kubectl delete job ${name} --ignore-not-found`), `step 3 deletes job ${name}`)
  assert.match(line(/^kubectl wait /), new RegExp(`--for=condition=complete job/${name} `))
  const logs = line(/^kubectl logs /)
  assert.match(logs, new RegExp(` -l job-name=${name} `))
  assert.match(logs, / --tail=-1 /, 'a selector prints only 10 lines per pod without --tail=-1')
  assert.match(logs, / --prefix /)
  assert.ok(Number(/--max-log-requests=(\d+)/.exec(logs)![1]) >= n, `--max-log-requests covers the ${n} pods`)

  // The edits step 2 asks for, made for a run here: N = 2, this machine's target, a short run.
  const kustomization = join(dir, 'kustomization.yaml')
  await writeFile(kustomization, (await readFile(kustomization, 'utf8')).replaceAll(`value: ${n}`, 'value: 2'))
  const shipped = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as Record<string, unknown>
  const urls = [server.url, server.url.replace('127.0.0.1', 'localhost')]
  await writeFile(join(dir, 'run.json'), JSON.stringify({ ...shipped, shard: 'auto/2', urls, z: '300ms', q: '80', warmup: '10' }))
  // A start the two local pods can make (the documented one is minutes away), in the one-liner's format.
  const soon = new Date(Math.ceil(Date.now() / 1000) * 1000 + 5000).toISOString().replace(/\.\d+Z$/, 'Z')
  await writeFile(join(dir, 'start.env'), `START_AT=${soon}\n`)
  const edited = await render()
  assert.equal(edited.job.spec!.completions, 2)
  assert.equal(edited.startAt, soon)
  const container = edited.job.spec!.template.spec!.containers[0]!
  const configFile = join(root, 'run.json')
  await writeFile(configFile, edited.runJson)

  // The pods, as the Job starts them: the container's args with $(START_AT) expanded, JOB_COMPLETION_INDEX set.
  const args = container.args!.map((a) => (a === '$(START_AT)' ? edited.startAt : a === '/etc/hedgebench/run.json' ? configFile : a))
  const pods = [0, 1].map((i) => startCli(args, { env: { JOB_COMPLETION_INDEX: String(i) }, nodeArgs: YOUNG_GENERATION_FLAGS, timeoutMs: 60_000 }))
  const ran = await Promise.all(pods.map((p) => p.done))
  for (const r of ran) assert.equal(r.code, 0, r.stderr)
  // `kubectl logs -l … --prefix` with several pods: each line as `[pod/NAME/CONTAINER] line`, the pods' lines interleaved.
  const perPod = ran.map((r, i) =>
    r.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => `[pod/${name}-${i}-q8x2n/${container.name}] ${l}`),
  )
  const interleaved: string[] = []
  for (let k = 0; k < Math.max(...perPod.map((p) => p.length)); k++) for (const p of perPod) if (p[k] !== undefined) interleaved.push(p[k]!)

  // Step 4's merge and step 5's report, as written.
  const merge = /\| hedgebench merge (.+)$/.exec(line(/\| hedgebench merge /))![1]!.split(' ')
  const merged = await runMergeWithStdin(merge, `${interleaved.join('\n')}\n`, 60_000, dir)
  assert.equal(merged.code, 0, merged.stderr)
  const report = line(/^hedgebench report /)
    .split(' ')
    .slice(1)
  const r = await runMain(report, { cwd: dir, timeoutMs: 60_000 })
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /\(merged, 2 shards\)/)
  const result = JSON.parse(await readFile(join(dir, 'merged.json'), 'utf8')) as { phases: Record<string, { requests: number }> }
  const sent = Object.values(result.phases).reduce((sum, p) => sum + p.requests, 0)
  assert.ok(sent > 0, "the merged run holds the pods' requests")
})
