/**
 * The temporary name a file is written under before it is renamed into
 * place (saved results, the per-request log): beside the target, so the
 * rename stays on one file system, and recognisable (and hidden) if a crash
 * leaves it behind.
 */
import { randomBytes } from 'node:crypto'
import { basename, dirname, join } from 'node:path'

export const TEMP_PREFIX = '.hedgebench-tmp-'

export function tempPathBeside(path: string): string {
  return join(dirname(path), `${TEMP_PREFIX}${basename(path)}-${process.pid}-${randomBytes(4).toString('hex')}`)
}
