// OpenTelemetry metrics over OTLP/HTTP to a collector the user names, through
// the OpenTelemetry SDK: the same families as the Prometheus endpoint, as
// observable gauges and counters (cumulative), pushed every interval and once
// more when the session ends (close() flushes, so the last values arrive).
// A failed push is told once (where it went and why), not retried into noise.
// The SDK is loaded when a push starts: the CLI does not pay for it otherwise.
import type { MeterProvider, PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { FAMILIES, readingsOf, type Reading, type ReadingSource } from './readings';

export interface OtlpOptions {
  /** the collector's OTLP/HTTP metrics URL, e.g. http://127.0.0.1:4318/v1/metrics */
  url: string;
  /** extra HTTP headers (an API key) */
  headers?: Record<string, string>;
  /** ms between pushes (default 10,000) */
  intervalMs?: number;
  /** the service.name resource attribute (default "paranode") */
  serviceName?: string;
  /** called once with what went wrong when a push fails */
  onError?: (message: string) => void;
}

/** Parse the CLI's `--otlp-header name=value`. */
export function parseHeader(text: string, into: Record<string, string> = {}): Record<string, string> {
  const i = text.indexOf('=');
  if (i <= 0) throw new Error(`an OTLP header is name=value (got "${text}")`);
  into[text.slice(0, i).trim()] = text.slice(i + 1).trim();
  return into;
}

type Sdk = typeof import('@opentelemetry/exporter-metrics-otlp-http') & typeof import('@opentelemetry/resources') & typeof import('@opentelemetry/sdk-metrics');

export class OtlpExporter {
  private readonly sources = new Set<ReadingSource>();
  private readonly provider: MeterProvider;
  private closed = false;
  private told = false;

  private constructor(readonly opts: OtlpOptions, sdk: Sdk) {
    const { OTLPMetricExporter, resourceFromAttributes, MeterProvider, PeriodicExportingMetricReader } = sdk;
    const exporter = new OTLPMetricExporter({ url: opts.url, headers: opts.headers ?? {} });
    const interval = Math.max(100, opts.intervalMs ?? 10_000);
    this.provider = new MeterProvider({
      resource: resourceFromAttributes({ 'service.name': opts.serviceName ?? 'paranode' }),
      readers: [new PeriodicExportingMetricReader({ exporter: this.telling(exporter), exportIntervalMillis: interval, exportTimeoutMillis: Math.min(interval, 10_000) })],
    });
    const meter = this.provider.getMeter('paranode');
    for (const [name, f] of Object.entries(FAMILIES)) {
      const family = name as Reading['family'];
      const unit = name.endsWith('_seconds') ? 's' : name.endsWith('_calls') ? '{call}' : '';
      const instrument = f.kind === 'gauge' ? meter.createObservableGauge(name, { description: f.help, unit }) : meter.createObservableCounter(name, { description: f.help, unit });
      instrument.addCallback((result) => {
        for (const s of this.sources) for (const r of readingsOf(s)) if (r.family === family) result.observe(r.value, r.labels);
      });
    }
  }

  /** Start pushing (the SDK's global meter provider is left alone: this one is used directly). */
  static async start(opts: OtlpOptions): Promise<OtlpExporter> {
    let url: URL;
    try { url = new URL(opts.url); } catch { throw new Error(`--otlp: "${opts.url}" is not a URL (e.g. http://127.0.0.1:4318/v1/metrics)`); }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--otlp: OTLP/HTTP needs an http: or https: URL (got ${url.protocol})`);
    const [exporter, resources, metrics] = await Promise.all([import('@opentelemetry/exporter-metrics-otlp-http'), import('@opentelemetry/resources'), import('@opentelemetry/sdk-metrics')]);
    return new OtlpExporter(opts, { ...exporter, ...resources, ...metrics });
  }

  /** The exporter, with a failed push told once. */
  private telling(exporter: PushMetricExporter): PushMetricExporter {
    const wrapped: PushMetricExporter = {
      export: (data, done) => exporter.export(data, (result) => {
        if (result.code !== 0 && !this.told) {
          this.told = true;
          this.opts.onError?.(`OTLP push to ${this.opts.url} failed: ${result.error?.message ?? 'no reason given'} (later failures are not told)`);
        }
        done(result);
      }),
      forceFlush: () => exporter.forceFlush(),
      shutdown: () => exporter.shutdown(),
      selectAggregationTemporality: exporter.selectAggregationTemporality?.bind(exporter),
      selectAggregation: exporter.selectAggregation?.bind(exporter),
    };
    return wrapped;
  }

  /** Push what this source measures (a session, with its metric manager and call paths). */
  add(source: ReadingSource): void { this.sources.add(source); }

  /** Push the last values now and stop. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try { await this.provider.forceFlush(); } finally { await this.provider.shutdown(); }
  }
}
