import { createRequire } from 'node:module';
import type { Meter } from '@opentelemetry/api';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { ConfigurationError } from '@switchboard/core';
import type { Hono } from 'hono';
import { METER_NAME } from './engine-metrics.js';

type PrometheusPackage = typeof import('@opentelemetry/exporter-prometheus');
type SdkMetricsPackage = typeof import('@opentelemetry/sdk-metrics');
type OtlpMetricsPackage = typeof import('@opentelemetry/exporter-metrics-otlp-http');
type ResourcesPackage = typeof import('@opentelemetry/resources');

/**
 * Where an app's metrics go: served in the Prometheus text format on the
 * app's own HTTP server (no second port), and pushed over OTLP/HTTP (JSON)
 * when an OTLP endpoint is configured. Through `@opentelemetry/sdk-metrics`,
 * `@opentelemetry/exporter-prometheus` and, for OTLP,
 * `@opentelemetry/exporter-metrics-otlp-http` (optional peer dependencies:
 * `npm install @opentelemetry/sdk-metrics@2 @opentelemetry/exporter-prometheus @opentelemetry/exporter-metrics-otlp-http`).
 *
 * With `auth`, the Prometheus route needs a key like any other (it is not one
 * of `DEFAULT_PUBLIC_ROUTES`); give the scraper a key of its own.
 *
 * @example
 * ```ts
 * new App({ name: 'desk', agents, metrics: true }); // GET /metrics, and OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set
 * new App({ name: 'desk', agents, metrics: { path: '/internal/metrics' } });
 * new App({ name: 'desk', agents, metrics: { prometheus: false, otlp: { url: 'http://collector:4318/v1/metrics' } } });
 * ```
 */
export interface MetricsOptions {
  /** Where the Prometheus text is served (default `/metrics`). */
  path?: string;
  /** Serve the Prometheus route (default true). */
  prometheus?: boolean;
  /**
   * Push the metrics over OTLP/HTTP. Default: on when
   * `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is
   * set (`/v1/metrics` is appended to the latter), as OpenTelemetry's SDKs do.
   */
  otlp?: boolean | OtlpMetricsOptions;
  /** Where the variables are read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** `service.name` of the metrics' resource (`target_info`): default `OTEL_SERVICE_NAME`, then the app's name. */
  serviceName?: string;
  /** `service.version` of the metrics' resource, e.g. your package's version (default none). */
  serviceVersion?: string;
}

/** Options of the OTLP metrics push. */
export interface OtlpMetricsOptions {
  /** The full metrics URL (default from the environment, see {@link MetricsOptions.otlp}). */
  url?: string;
  /** Extra request headers (the exporter also reads `OTEL_EXPORTER_OTLP_HEADERS`). */
  headers?: Record<string, string>;
  /** How often metrics are pushed, in milliseconds (default `OTEL_METRIC_EXPORT_INTERVAL`, else 60 000). */
  intervalMs?: number;
}

/** An app's own meter provider: read on request by its metrics route, and pushed over OTLP when configured. */
export interface AppMetrics {
  /** Where the Prometheus route is served, when it is. */
  readonly path: string | undefined;
  /** The meter the app records with. */
  readonly meter: Meter;
  /** The metrics as Prometheus text (empty when the route is off). */
  scrape(): Promise<string>;
  /** Pushes the last metrics and shuts the meter provider down. */
  shutdown(): Promise<void>;
}

/** The Prometheus text format's content type. */
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function otlpMetricsUrl(
  option: boolean | OtlpMetricsOptions | undefined,
  env: Record<string, string | undefined>,
): string | undefined {
  if (option === false) return undefined;
  const url =
    (typeof option === 'object' ? option.url : undefined) ??
    (env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT || undefined) ??
    (env.OTEL_EXPORTER_OTLP_ENDPOINT
      ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/metrics`
      : undefined);
  if (url === undefined && option !== undefined)
    throw new ConfigurationError({
      message:
        'metrics.otlp needs a URL: pass otlp.url or set OTEL_EXPORTER_OTLP_METRICS_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT',
    });
  return url;
}

function required<T>(load: (specifier: string) => unknown, specifier: string, install: string): T {
  try {
    return load(specifier) as T;
  } catch (error) {
    throw new ConfigurationError({
      message: `metrics needs the ${specifier} package: install it (npm install ${install}) or turn that part of metrics off`,
      cause: error,
    });
  }
}

/** How {@link appMetrics} finds its packages and names its service. */
export interface AppMetricsContext {
  /** The default `service.name` (default `switchboard`). */
  appName?: string;
  /** Finds a package (Node's own `require` by default). */
  load?: (specifier: string) => unknown;
}

/**
 * Makes an app's meter provider: a Prometheus reader that serializes on
 * request, and a periodic OTLP push when configured, under a resource that
 * names the service (so `target_info` never says `unknown_service:node`).
 *
 * @throws ConfigurationError when a package is missing, the path is not absolute, or OTLP is asked for without a URL.
 */
export function appMetrics(
  {
    path = '/metrics',
    prometheus: servePrometheus = true,
    otlp,
    env = process.env,
    serviceName,
    serviceVersion,
  }: MetricsOptions = {},
  { appName = 'switchboard', load = createRequire(import.meta.url) }: AppMetricsContext = {},
): AppMetrics {
  if (servePrometheus && (!path.startsWith('/') || path.startsWith('/v1/') || path === '/v1')) {
    throw new ConfigurationError({
      message: `metrics.path must start with '/' and be outside /v1, not '${path}'`,
    });
  }
  const otlpUrl = otlpMetricsUrl(otlp, env);
  const sdk = required<SdkMetricsPackage>(load, '@opentelemetry/sdk-metrics', '@opentelemetry/sdk-metrics@2');
  const readers: import('@opentelemetry/sdk-metrics').IMetricReader[] = [];
  let scrape = async () => '';
  if (servePrometheus) {
    const prometheus = required<PrometheusPackage>(
      load,
      '@opentelemetry/exporter-prometheus',
      '@opentelemetry/exporter-prometheus',
    );
    // preventServerStart: the app's own route serves the text, so no second port is opened.
    const reader = new prometheus.PrometheusExporter({ preventServerStart: true });
    const serializer = new prometheus.PrometheusSerializer();
    readers.push(reader);
    scrape = async () => serializer.serialize(withUnitSuffixes((await reader.collect()).resourceMetrics));
  }
  if (otlpUrl !== undefined) {
    const { OTLPMetricExporter } = required<OtlpMetricsPackage>(
      load,
      '@opentelemetry/exporter-metrics-otlp-http',
      '@opentelemetry/exporter-metrics-otlp-http',
    );
    const options = typeof otlp === 'object' ? otlp : {};
    const exporter = new OTLPMetricExporter(
      options.headers ? { url: otlpUrl, headers: options.headers } : { url: otlpUrl },
    );
    const interval = options.intervalMs ?? (Number(env.OTEL_METRIC_EXPORT_INTERVAL) || 60_000);
    readers.push(
      new sdk.PeriodicExportingMetricReader({
        exporter,
        exportIntervalMillis: interval,
        exportTimeoutMillis: Math.min(30_000, interval),
      }),
    );
  }
  const resources = required<ResourcesPackage>(
    load,
    '@opentelemetry/resources',
    '@opentelemetry/resources@2',
  );
  const service: Record<string, string> = {
    'service.name': serviceName ?? (env.OTEL_SERVICE_NAME || appName),
  };
  if (serviceVersion !== undefined) service['service.version'] = serviceVersion;
  const resource = resources.defaultResource().merge(resources.resourceFromAttributes(service));
  const provider = new sdk.MeterProvider({ readers, resource });
  let stopping: Promise<void> | undefined;
  return {
    path: servePrometheus ? path : undefined,
    meter: provider.getMeter(METER_NAME),
    scrape,
    shutdown: () => {
      stopping ??= provider.shutdown();
      return stopping;
    },
  };
}

/**
 * The metrics with their unit in their Prometheus names, as OpenTelemetry's
 * Prometheus compatibility rules ask and the exporter does not do:
 * `http.server.request.duration` (unit `s`) is served as
 * `http_server_request_duration_seconds`. The OTLP push keeps the
 * OpenTelemetry names. Done at scrape time, so recording pays nothing.
 */
function withUnitSuffixes(resourceMetrics: ResourceMetrics): ResourceMetrics {
  return {
    ...resourceMetrics,
    scopeMetrics: resourceMetrics.scopeMetrics.map((scope) => ({
      ...scope,
      metrics: scope.metrics.map((metric) => {
        const { descriptor } = metric;
        if (descriptor.unit !== 's' || descriptor.name.endsWith('seconds')) return metric;
        return { ...metric, descriptor: { ...descriptor, name: `${descriptor.name}_seconds` } };
      }),
    })),
  };
}

/** Adds the metrics route (`GET`) to the app's routes; returns it with its methods, for the 405 answers. */
export function mountMetrics(app: Hono, metrics: AppMetrics): Record<string, readonly string[]> {
  const { path } = metrics;
  if (path === undefined) return {};
  app.get(path, async (c) => c.body(await metrics.scrape(), 200, { 'content-type': CONTENT_TYPE }));
  return { [path]: ['GET'] };
}
