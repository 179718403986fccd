/**
 * The temporary name a file is written under before it is renamed into
 * place (saved results, the per-request log): beside the target, so the
 * rename stays on one file system, and recognisable (and hidden) if a crash
 * leaves it behind.
 */
import { randomBytes } from 'node:crypto'
import { stat } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

export const TEMP_PREFIX = '.hedgebench-tmp-'

export function tempPathBeside(path: string): string {
  return join(dirname(path), `${TEMP_PREFIX}${basename(path)}-${process.pid}-${randomBytes(4).toString('hex')}`)
}

/**
 * Exists and is not a regular file (a device such as /dev/stdout, a FIFO):
 * written in place, since a rename would replace it with a file (as root,
 * /dev/stdout itself, for every process on the machine).
 */
export async function isSpecialFile(path: string): Promise<boolean> {
  try {
    return !(await stat(path)).isFile()
  } catch {
    return false
  }
}
