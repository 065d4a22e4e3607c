// Preload (-r) of the startup bench: at exit, write this process's peak RSS
// (KiB, process.resourceUsage().maxRSS) to $PARANODE_BENCH_RSS/<pid>. Prints nothing.
'use strict';
const dir = process.env.PARANODE_BENCH_RSS;
if (dir) {
  const fs = require('fs');
  const path = require('path');
  process.on('exit', () => {
    try { fs.writeFileSync(path.join(dir, String(process.pid)), String(process.resourceUsage().maxRSS)); } catch { /* nothing to do */ }
  });
}
