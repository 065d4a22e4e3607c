// What the tool hands to the agent it starts in a target.
import type { HandlerPrices } from './intrusion';
import type { ProbeSpec } from './runtime';

export interface AgentConfig {
  /** Unix socket the tool listens on */
  socketPath: string;
  /** shared secret the agent must present */
  token: string;
  /** directory the runtime writes its last sample to (<pid>-<thread>.json) when a thread exits */
  finalPath: string;
  /** prepare every module loaded from now on (load-time slots) */
  prepareOnLoad: boolean;
  /** probes to place before the program's first line runs (launch) */
  probes?: ProbeSpec[];
  /** launch: measure each thread's own values (CPU, wall, GC, event loop) from its start */
  watch?: boolean;
  /** launch: timers keep their virtual time from the first line (intrusion compensation) */
  prices?: HandlerPrices;
  /** working directory used to name modules */
  cwd?: string;
  /** launch: the NODE_OPTIONS the program was meant to have (null: none), put back once the agent has started */
  nodeOptions?: string | null;
  /** attach: the tool's signal opened the inspector port; start() closes it (port-close.ts), and the watchdog again if the tool vanishes */
  openedPort?: boolean;
  /** the tool that starts the agent: named to a second tool, which is refused while this one's session lasts */
  tool?: ToolIdentity;
}

export interface ToolIdentity { pid: number; command: string }

export const AGENT_ENV = 'PARANODE_AGENT';
