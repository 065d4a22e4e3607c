// Programs from Debian some tests drive as the real consumers of what paranode
// makes: Chromium (the UI's page, through playwright-core; Playwright's own
// browser download is not available on these machines), Go's pprof (the pprof
// export) and Prometheus (the /metrics endpoint). Installed by the test runner
// when missing and this user may (root, apt-get): `npm test` on a fresh machine runs everything.
import { spawnSync } from 'child_process';
import * as fs from 'fs';

interface Tool { paths: string[]; env: string; pkg: string; why: string; files: RegExp }

const TOOLS = {
  chromium: { paths: ['/usr/bin/chromium', '/usr/bin/chromium-browser'], env: 'PARANODE_CHROMIUM', pkg: 'chromium', why: "the browser tests (the UI's page, speedscope)", files: /\b(ui|profile-apps)\.test/ },
  go: { paths: ['/usr/bin/go', '/usr/lib/go/bin/go'], env: 'PARANODE_GO', pkg: 'golang-go', why: "the pprof export's test (go tool pprof)", files: /\bexports\.test/ },
  prometheus: { paths: ['/usr/bin/prometheus'], env: 'PARANODE_PROMETHEUS', pkg: 'prometheus', why: "the Prometheus endpoint's test", files: /\bexports\.test/ },
} satisfies Record<string, Tool>;

export type ToolName = keyof typeof TOOLS;

/** its path: $PARANODE_<TOOL>, else Debian's (null: none installed) */
export function toolPath(name: ToolName): string | null {
  const t: Tool = TOOLS[name];
  const given = process.env[t.env];
  if (given) return fs.existsSync(given) ? given : null;
  return t.paths.find((p) => fs.existsSync(p)) ?? null;
}

/** The tool's path, or an error that says how to get it. */
export function requireTool(name: ToolName): string {
  const p = toolPath(name);
  if (!p) throw new Error(`no ${name} for ${TOOLS[name].why}: install it (Debian: apt-get install ${TOOLS[name].pkg}) or set ${TOOLS[name].env}`);
  return p;
}

/**
 * Install the tools the selected test files need and this machine lacks, in one
 * apt-get run when root. Returns what to tell the user for each it cannot.
 */
export function ensureTools(files: string[], log: (m: string) => void): string[] {
  const missing = (Object.keys(TOOLS) as ToolName[]).filter((n) => files.some((f) => TOOLS[n].files.test(f)) && !toolPath(n));
  if (!missing.length) return [];
  const how = (n: ToolName) => `no ${n} for ${TOOLS[n].why}: install it (Debian: apt-get install ${TOOLS[n].pkg}) or set ${TOOLS[n].env}`;
  const root = process.getuid?.() === 0;
  const apt = spawnSync('sh', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).status === 0;
  if (!root || !apt) return missing.map(how);
  const pkgs = missing.map((n) => TOOLS[n].pkg);
  log(`# installing Debian's ${pkgs.join(', ')} for ${missing.map((n) => TOOLS[n].why).join(', ')} (apt-get install)`);
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', '--no-install-recommends', ...pkgs]]) {
    const r = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (r.status !== 0) return missing.map((n) => `apt-get ${args.join(' ')} failed (status ${r.status}): ${how(n)}`);
  }
  return missing.filter((n) => !toolPath(n)).map(how);
}
