/**
 * Loaded with `node --import` into a process a test starts: at its exit it
 * writes its peak resident set size (KiB) as the last line of stderr, so the
 * test can hold a budget on it without a tool of the machine's.
 */
process.on('exit', () => {
  process.stderr.write(`test: max RSS ${process.resourceUsage().maxRSS} KiB\n`)
})
