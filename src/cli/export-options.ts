// --prometheus and --otlp on run, attach and diagnose: what the session
// measures, served to Prometheus and pushed to an OpenTelemetry collector.
import * as fs from 'fs';
import { Command, InvalidArgumentError } from 'commander';
import { OtlpExporter, parseHeader } from '../exports/otlp';
import { MetricsEndpoint } from '../exports/prometheus';
import type { ReadingSource } from '../exports/readings';

export interface ExportCliOpts { prometheus?: number; prometheusTokenFile?: string; otlp?: string; otlpHeader?: Record<string, string>; otlpInterval?: number }

const port = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('--prometheus takes a port number, 0-65535 (0: any free one)');
  return n;
};
const header = (v: string, prev: Record<string, string> | undefined) => {
  try { return parseHeader(v, { ...prev }); } catch (e) { throw new InvalidArgumentError((e as Error).message); }
};
const seconds = (v: string): number => {
  const n = Number(v);
  if (!(n >= 0.1)) throw new InvalidArgumentError('--otlp-interval is in seconds, 0.1 or more');
  return n;
};

export function addExportOptions(cmd: Command): Command {
  return cmd
    .option('--prometheus <port>', 'serve the metrics at http://127.0.0.1:<port>/metrics for Prometheus, with a bearer token (0: any free port)', port)
    .option('--prometheus-token-file <file>', "write the endpoint's bearer token to this file (mode 0600), for Prometheus' credentials_file")
    .option('--otlp <url>', 'push the metrics to an OpenTelemetry collector over OTLP/HTTP, e.g. http://127.0.0.1:4318/v1/metrics')
    .option('--otlp-header <name=value>', 'an HTTP header for each OTLP push, e.g. an API key (repeatable)', header)
    .option('--otlp-interval <seconds>', 'seconds between OTLP pushes (one more when the session ends)', seconds, 10);
}

/** The exporters asked for, opened before any program starts (a port in use stops the command first). */
export class CliExports {
  private constructor(private readonly endpoint?: MetricsEndpoint, private readonly otlp?: OtlpExporter) {}

  static async open(opts: ExportCliOpts, say: (m: string) => void): Promise<CliExports> {
    if (opts.prometheusTokenFile && opts.prometheus === undefined) throw new Error('--prometheus-token-file goes with --prometheus <port>');
    let endpoint: MetricsEndpoint | undefined;
    if (opts.prometheus !== undefined) {
      endpoint = await MetricsEndpoint.open({ port: opts.prometheus });
      if (opts.prometheusTokenFile) {
        try {
          fs.writeFileSync(opts.prometheusTokenFile, endpoint.token, { mode: 0o600 });
          fs.chmodSync(opts.prometheusTokenFile, 0o600);
        } catch (e) {
          await endpoint.close();
          throw new Error(`--prometheus-token-file: cannot write ${opts.prometheusTokenFile}: ${(e as Error).message}`);
        }
      }
      say(`Prometheus metrics at ${endpoint.url} (${opts.prometheusTokenFile ? `bearer token in ${opts.prometheusTokenFile}` : `Authorization: Bearer ${endpoint.token}`}; it stops when the session ends)`);
    }
    let otlp: OtlpExporter | undefined;
    if (opts.otlp) {
      const interval = opts.otlpInterval ?? 10;
      try {
        otlp = await OtlpExporter.start({ url: opts.otlp, headers: opts.otlpHeader ?? {}, intervalMs: interval * 1000, onError: (m) => say(m) });
      } catch (e) {
        await endpoint?.close();
        throw e;
      }
      say(`pushing metrics to ${opts.otlp} every ${interval} s over OTLP/HTTP (and once more at the end)`);
    }
    return new CliExports(endpoint, otlp);
  }

  get any(): boolean { return !!(this.endpoint || this.otlp); }

  add(source: ReadingSource): void {
    this.endpoint?.add(source);
    this.otlp?.add(source);
  }

  /** The last values pushed, then nothing listens. */
  async close(): Promise<void> {
    await Promise.all([this.endpoint?.close(), this.otlp?.close()]);
  }
}
