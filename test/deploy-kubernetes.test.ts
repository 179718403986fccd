/**
 * deploy/kubernetes, checked offline: rendered with `kubectl kustomize` (no
 * cluster needed) and validated against the Kubernetes schema with
 * kubernetes-models (4.x: runs on Node 20). Then what the schema cannot
 * know: N is the same in the Job and in the pods' --shard, the pods read the
 * generated ConfigMap, and that config is flags the CLI accepts.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parseAllDocuments } from 'yaml'
import { Job } from 'kubernetes-models/batch/v1/Job'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { runCli } from './helpers/cli.js'
import { startServer } from './helpers/servers.js'

const exec = promisify(execFile)
const DEPLOY = fileURLToPath(new URL('../../deploy/kubernetes/', import.meta.url))
const KUBECTL = 'kubectl'

async function kubectlAvailable(): Promise<boolean> {
  return exec(KUBECTL, ['version', '--client'], { timeout: 10_000 }).then(() => true, () => false)
}

interface Rendered {
  job: Job
  configMap: ConfigMap
}

async function render(dir: string): Promise<Rendered> {
  const { stdout } = await exec(KUBECTL, ['kustomize', join(DEPLOY, dir)], { timeout: 20_000 })
  const docs = parseAllDocuments(stdout).map((d) => d.toJS() as { kind: string })
  assert.deepEqual(docs.map((d) => d.kind).sort(), ['ConfigMap', 'Job'])
  const job = new Job(docs.find((d) => d.kind === 'Job') as never)
  const configMap = new ConfigMap(docs.find((d) => d.kind === 'ConfigMap') as never)
  job.validate()
  configMap.validate()
  return { job, configMap }
}

for (const dir of ['base', 'overlays/example']) {
  test(`${dir}: an Indexed Job of N pods that each run shard auto/N, valid against the Kubernetes schema`, async (t) => {
    if (!(await kubectlAvailable())) return t.skip('kubectl not found: cannot render the kustomization (apt-get install kubectl, or see .ci/run)')
    const { job, configMap } = await render(dir)
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
    assert.ok(pod.topologySpreadConstraints!.some((c) => c.topologyKey === 'kubernetes.io/hostname'), 'spread over nodes')
    const container = pod.containers[0]!
    assert.deepEqual(container.resources!.requests, container.resources!.limits, 'requests = limits')
    assert.deepEqual(container.args, ['--config', '/etc/hedgebench/run.json'])
    const volume = pod.volumes!.find((v) => v.name === container.volumeMounts![0]!.name)!
    assert.equal(volume.configMap!.name, configMap.metadata!.name, 'the pods mount the generated ConfigMap (hash suffix included)')
    assert.equal(config.frames, true, 'results leave the pods as framed log lines')
    assert.equal(typeof config['start-at'], 'string', 'one agreed start')
  })
}

test('the schema check has teeth: a misspelt completionMode is rejected', async (t) => {
  if (!(await kubectlAvailable())) return t.skip('kubectl not found')
  const { job } = await render('base')
  const broken = new Job({ ...job.toJSON(), spec: { ...job.spec!, completionMode: 'Indxed' } } as never)
  assert.throws(() => broken.validate(), /completionMode/)
})

test('the ConfigMap\'s run.json is flags the CLI accepts: pod 1 of the example runs its share against a local target', async (t) => {
  if (!(await kubectlAvailable())) return t.skip('kubectl not found')
  const { configMap } = await render('overlays/example')
  const server = await startServer({ delayMs: 1 })
  const dir = await mkdtemp(join(tmpdir(), 'hedgebench-k8s-'))
  t.after(async () => {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  })
  // The cluster's URLs, start time and size swapped for a local, short run; every other flag as shipped.
  const config = { ...(JSON.parse(configMap.data!['run.json']!) as Record<string, unknown>), urls: [server.url, server.url.replace('127.0.0.1', 'localhost')], 'start-at': '+0s', z: '300ms', q: '80', warmup: '10' }
  const file = join(dir, 'run.json')
  await writeFile(file, JSON.stringify(config))
  const r = await runCli(['--config', file], { env: { JOB_COMPLETION_INDEX: '1' }, timeoutMs: 30_000 })
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /Shard: shard 1\/8 · run checkout-2026-12-01-run1/)
  assert.match(r.stdout, /HBFRAME1 checkout-2026-12-01-run1 1\/8 1\/\d+ /)
})
