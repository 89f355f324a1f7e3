#!/usr/bin/env node
// The dsvc command: the CLI built into dist/ (npm run build).
import '../dist/cli/main.js';
