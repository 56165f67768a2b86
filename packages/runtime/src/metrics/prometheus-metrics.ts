import { createRequire } from 'node:module';
import type { Meter } from '@opentelemetry/api';
import { ConfigurationError } from '@switchboard/core';
import type { Hono } from 'hono';
import { METER_NAME } from './engine-metrics.js';

type PrometheusPackage = typeof import('@opentelemetry/exporter-prometheus');
type SdkMetricsPackage = typeof import('@opentelemetry/sdk-metrics');

/**
 * Serves the app's metrics in the Prometheus text format on its own HTTP
 * server (no second port), through `@opentelemetry/sdk-metrics` and
 * `@opentelemetry/exporter-prometheus` (optional peer dependencies:
 * `npm install @opentelemetry/sdk-metrics@2 @opentelemetry/exporter-prometheus`).
 *
 * With `auth`, the route needs a key like any other (it is not one of
 * `DEFAULT_PUBLIC_ROUTES`); give the scraper a key of its own.
 *
 * @example
 * ```ts
 * new App({ name: 'desk', agents, metrics: true }); // GET /metrics
 * new App({ name: 'desk', agents, metrics: { path: '/internal/metrics' } });
 * ```
 */
export interface MetricsOptions {
  /** Where the metrics are served (default `/metrics`). */
  path?: string;
}

/** An app's own meter provider, read on request by its metrics route. */
export interface PrometheusMetrics {
  readonly path: string;
  /** The meter the app records with. */
  readonly meter: Meter;
  /** The metrics as Prometheus text. */
  scrape(): Promise<string>;
  /** Shuts the meter provider down. */
  shutdown(): Promise<void>;
}

/** The Prometheus text format's content type. */
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * Makes an app's meter provider with a Prometheus reader that serializes on
 * request. `load` finds a package (Node's own `require` by default).
 *
 * @throws ConfigurationError when a package is missing or the path is not absolute.
 */
export function prometheusMetrics(
  { path = '/metrics' }: MetricsOptions = {},
  load: (specifier: string) => unknown = createRequire(import.meta.url),
): PrometheusMetrics {
  if (!path.startsWith('/') || path.startsWith('/v1/') || path === '/v1') {
    throw new ConfigurationError({
      message: `metrics.path must start with '/' and be outside /v1, not '${path}'`,
    });
  }
  let sdk: SdkMetricsPackage;
  let prometheus: PrometheusPackage;
  try {
    sdk = load('@opentelemetry/sdk-metrics') as SdkMetricsPackage;
    prometheus = load('@opentelemetry/exporter-prometheus') as PrometheusPackage;
  } catch (error) {
    throw new ConfigurationError({
      message:
        'metrics needs the @opentelemetry/sdk-metrics and @opentelemetry/exporter-prometheus packages: install them (npm install @opentelemetry/sdk-metrics@2 @opentelemetry/exporter-prometheus) or turn metrics off',
      cause: error,
    });
  }
  // preventServerStart: the app's own route serves the text, so no second port is opened.
  const reader = new prometheus.PrometheusExporter({ preventServerStart: true });
  const provider = new sdk.MeterProvider({ readers: [reader] });
  const serializer = new prometheus.PrometheusSerializer();
  return {
    path,
    meter: provider.getMeter(METER_NAME),
    async scrape() {
      const { resourceMetrics } = await reader.collect();
      return serializer.serialize(resourceMetrics);
    },
    shutdown: () => provider.shutdown(),
  };
}

/** Adds the metrics route (`GET`) to the app's routes; returns it with its methods, for the 405 answers. */
export function mountMetrics(app: Hono, metrics: PrometheusMetrics): Record<string, readonly string[]> {
  app.get(metrics.path, async (c) => c.body(await metrics.scrape(), 200, { 'content-type': CONTENT_TYPE }));
  return { [metrics.path]: ['GET'] };
}
