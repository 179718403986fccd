#!/usr/bin/env node
// Thin shim over the compiled CLI (npm run build writes dist/).
import { main } from '../dist/src/cli/main.js'

process.exitCode = await main()
