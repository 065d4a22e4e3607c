// Where the calibration is kept, and the key of this machine and Node version
// in it: shared by the tool (which measures and prices) and the runtime in a
// target (which reads the cost of its own call-path operations from it).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

export function configDir(): string {
  return process.env.PARANODE_CONFIG_DIR ?? path.join(process.env.XDG_CONFIG_HOME ?? path.join(os.homedir(), '.config'), 'paranode');
}

export const machineKey = (): string => `${process.version} ${process.arch} ${os.cpus()[0]?.model ?? '?'} ${os.hostname()}`;
export const calibrationFile = (): string => path.join(configDir(), 'calibration.json');

/** The calibration entry of this machine and Node version as stored (unchecked), or null. */
export function readCalibrationEntry(): Record<string, unknown> | null {
  try {
    const all = JSON.parse(fs.readFileSync(calibrationFile(), 'utf8')) as Record<string, Record<string, unknown>>;
    return all[machineKey()] ?? null;
  } catch {
    return null;
  }
}
