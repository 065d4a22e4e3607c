// The browser the UI tests drive: Debian's chromium (playwright-core drives it;
// Playwright's own browser download is not available on these machines).
import { spawnSync } from 'child_process';
import * as fs from 'fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** its path: PARANODE_CHROMIUM, else Debian's (null: none installed) */
export function chromiumPath(): string | null {
  const given = process.env.PARANODE_CHROMIUM;
  if (given) return fs.existsSync(given) ? given : null;
  return CANDIDATES.find((p) => fs.existsSync(p)) ?? null;
}

/**
 * Install Debian's chromium when none is there and this user may (root, apt-get):
 * `npm test` on a fresh machine runs everything. Returns what to tell the user if it cannot.
 */
export function ensureChromium(log: (m: string) => void): string | null {
  if (chromiumPath()) return null;
  const root = process.getuid?.() === 0;
  const apt = spawnSync('sh', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).status === 0;
  const how = 'install it (Debian: apt-get install chromium) or set PARANODE_CHROMIUM to a Chromium binary';
  if (!root || !apt) return `no Chromium for the UI's browser tests: ${how}`;
  log('# installing Debian\'s chromium for the UI\'s browser tests (apt-get install chromium)');
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', '--no-install-recommends', 'chromium']]) {
    const r = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (r.status !== 0) return `apt-get ${args.join(' ')} failed (status ${r.status}): ${how}`;
  }
  return chromiumPath() ? null : `apt-get installed no chromium binary at ${CANDIDATES.join(' or ')}: ${how}`;
}
