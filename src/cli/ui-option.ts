// --ui and --ui-port on run, attach and diagnose: the live web page beside the terminal view.
import { Command, InvalidArgumentError } from 'commander';
import type { MdlLibrary } from '../mdl/library';
import type { UiServer } from '../ui/server';

export interface UiCliOpts { ui?: boolean; uiPort?: number }

const port = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('--ui-port must be a port number, 0-65535 (0: any free one)');
  return n;
};

export function addUiOptions(cmd: Command): Command {
  return cmd
    .option('--ui', 'serve a live web page of the session on 127.0.0.1 (its address, with a token, is printed)')
    .option('--ui-port <port>', 'the page\'s port (implies --ui; default: any free one)', port);
}

/** The page's server if asked for, its address printed; undefined if not. */
export async function openUi(opts: UiCliOpts, title: string, library?: MdlLibrary, search = false): Promise<UiServer | undefined> {
  if (!opts.ui && opts.uiPort === undefined) return undefined;
  // loaded only when asked for: the page's server and its WebSocket library take ~15 ms of every start
  const { UiServer: Server } = await import('../ui/server');
  const ui = await Server.open({ port: opts.uiPort ?? 0, title, library, search });
  process.stderr.write(`paranode: the live page is at ${ui.url} (it stops when the session ends)\n`);
  return ui;
}
