/**
 * `mkdir -p` that always ends. Node's mkdir(path, { recursive: true })
 * spins forever (burning system CPU) when the kernel answers ENOENT for a
 * directory whose parent exists, as /proc and other pseudo file systems do
 * (`--out-dir /proc/x`). Here each missing component is created on its own,
 * so such an answer is an error like any other.
 */
import { mkdir, stat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'

/** Creates `path` and its missing parents; returns the first directory it created (undefined if none), as mkdir's recursive mode does. */
export async function makeDirs(path: string): Promise<string | undefined> {
  const missing: string[] = []
  // Bounded by the path's depth: dirname of the root is the root.
  for (let dir = resolve(path); !(await isPresent(dir)); dir = dirname(dir)) {
    missing.push(dir)
    if (dirname(dir) === dir) break
  }
  for (const dir of missing.reverse()) {
    await mkdir(dir).catch((err: NodeJS.ErrnoException) => {
      // Created meanwhile by someone else (another shard on the same disk): fine.
      if (err.code !== 'EEXIST') throw err
    })
  }
  // mkdir -p on an existing file must still fail (ENOTDIR/EEXIST), as the recursive mode does.
  if (missing.length === 0 && !(await stat(path)).isDirectory()) await mkdir(path)
  return missing[0]
}

/** Does anything exist at `path`? A component that is a file (ENOTDIR) counts as present, so mkdir reports it. */
async function isPresent(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    (err: NodeJS.ErrnoException) => err.code !== 'ENOENT',
  )
}
