import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ConfigurationError } from '@switchboard/core';
import { hasGlobalTracerProvider, registerGlobally } from './global-provider.js';
import {
  mediaUploadFromEnv,
  type OtlpExporterClass,
  protobufExporterClass,
  protocolFromEnv,
  type SwitchboardSpanProcessorOptions,
  switchboardSpanProcessor,
} from './langfuse-processor.js';

/** Where spans go when exported over plain OTLP/HTTP. */
export interface OtlpOptions {
  /** Base endpoint; `/v1/traces` is appended (default `OTEL_EXPORTER_OTLP_ENDPOINT`). */
  endpoint?: string;
  /** Full traces URL, used as is (default `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`). */
  tracesEndpoint?: string;
  /** Extra request headers (the exporter also reads `OTEL_EXPORTER_OTLP_HEADERS`). */
  headers?: Record<string, string>;
  /**
   * Wire format (default `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, then
   * `OTEL_EXPORTER_OTLP_PROTOCOL`, then `http/protobuf`, OpenTelemetry's default).
   */
  protocol?: 'http/json' | 'http/protobuf';
}

/** Options of {@link setupTracing}; each overrides the matching environment variable. */
export interface SetupTracingOptions {
  /** Langfuse export options (keys, URL, flush settings…), or `false` to ignore the `LANGFUSE_*` variables. */
  langfuse?: SwitchboardSpanProcessorOptions | false;
  /** Plain OTLP export options, or `false` to ignore the `OTEL_EXPORTER_OTLP_*` variables. */
  otlp?: OtlpOptions | false;
  /** More processors to add to the provider (e.g. a console exporter while debugging). */
  spanProcessors?: SpanProcessor[];
  /** `service.name` of the exported resource (default `OTEL_SERVICE_NAME`, then `switchboard`). */
  serviceName?: string;
  /**
   * The version of your app that made the traces (default `LANGFUSE_RELEASE`):
   * Langfuse's release (`langfuse.release`) and the resource's `service.version`.
   */
  release?: string;
  /**
   * Where the traces come from, e.g. `production` or `staging` (default
   * `LANGFUSE_TRACING_ENVIRONMENT`): Langfuse's environment
   * (`langfuse.environment`) and the resource's `deployment.environment.name`.
   * Lowercase letters, digits, `-` and `_`, at most 40 characters, not
   * starting with `langfuse`, as Langfuse requires.
   */
  environment?: string;
  /**
   * The share of turns to trace, from 0 to 1 (default `LANGFUSE_SAMPLE_RATE`,
   * Langfuse's own variable for it, else 1: every turn). Each turn is kept or
   * dropped whole, by its trace id: a kept turn has all its spans (decisions,
   * agent calls, model calls, `observe` spans), a dropped one none, and costs
   * a small fraction of what a kept one does to trace (its root span's
   * sampling decision). A turn resumed after an approval or a crash is a
   * trace of its own and is sampled on its own. Unset, OpenTelemetry's own
   * `OTEL_TRACES_SAMPLER` variables (read from `process.env`) apply.
   */
  sampleRate?: number;
  /** Where the variables are read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Receives a warning when tracing is configured but cannot be enabled (default `console.warn`). */
  onWarning?: (message: string) => void;
}

/** What {@link setupTracing} set up: pass it to `new App({ tracing })` so `close()` flushes it. */
export interface TracingHandle {
  /** True when Switchboard registered a provider that exports spans. */
  readonly enabled: boolean;
  /** Where spans go: `langfuse`, `otlp`, `custom` (from `spanProcessors`). Empty when disabled. */
  readonly destinations: readonly string[];
  /** The registered provider, when enabled. */
  readonly provider?: NodeTracerProvider;
  /** Exports every finished span now. */
  forceFlush(): Promise<void>;
  /** Flushes, shuts the provider down and unregisters it. Idempotent. */
  shutdown(): Promise<void>;
}

function langfuseProcessor(
  options: SwitchboardSpanProcessorOptions,
  env: Record<string, string | undefined>,
): SpanProcessor | undefined {
  const publicKey = options.publicKey ?? env.LANGFUSE_PUBLIC_KEY;
  const secretKey = options.secretKey ?? env.LANGFUSE_SECRET_KEY;
  const baseUrl = options.baseUrl ?? env.LANGFUSE_BASE_URL;
  if (!publicKey && !secretKey) return undefined;
  if (!publicKey || !secretKey) {
    const missing = publicKey ? 'LANGFUSE_SECRET_KEY' : 'LANGFUSE_PUBLIC_KEY';
    throw new ConfigurationError({
      message: `Langfuse tracing needs both LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY; ${missing} is missing`,
    });
  }
  const processorOptions: SwitchboardSpanProcessorOptions = {
    ...options,
    publicKey,
    secretKey,
    mediaUploadEnabled: options.mediaUploadEnabled ?? mediaUploadFromEnv(env),
    protocol: options.protocol ?? protocolFromEnv(env),
  };
  if (baseUrl) processorOptions.baseUrl = baseUrl.replace(/\/+$/, '');
  return switchboardSpanProcessor(processorOptions);
}

function otlpProcessor(
  options: OtlpOptions,
  env: Record<string, string | undefined>,
): SpanProcessor | undefined {
  const tracesUrl = (endpoint: string | undefined) =>
    endpoint ? `${endpoint.replace(/\/+$/, '')}/v1/traces` : undefined;
  // An empty variable counts as unset, as OpenTelemetry reads them (an env file's `NAME=` line).
  const url =
    options.tracesEndpoint ??
    tracesUrl(options.endpoint) ??
    (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || undefined) ??
    tracesUrl(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (!url) return undefined;
  const protocol = options.protocol ?? protocolFromEnv(env);
  const Exporter: OtlpExporterClass = protocol === 'http/json' ? OTLPTraceExporter : protobufExporterClass();
  const config: { url: string; headers?: Record<string, string> } = { url };
  if (options.headers) config.headers = options.headers;
  return new BatchSpanProcessor(new Exporter(config));
}

/**
 * The sampler for `sampleRate` (else `LANGFUSE_SAMPLE_RATE`): a turn's root
 * span is kept with that probability by its trace id, and every span below it
 * follows its parent. Undefined when neither is set.
 * @throws ConfigurationError for a rate that is not a number from 0 to 1.
 */
function samplerFor(
  sampleRate: number | undefined,
  env: Record<string, string | undefined>,
): Sampler | undefined {
  // Unset, empty or blank: no rate (a blank value read as 0 would silently trace nothing).
  const fromEnv = env.LANGFUSE_SAMPLE_RATE?.trim() || undefined;
  const rate = sampleRate ?? (fromEnv === undefined ? undefined : Number(fromEnv));
  if (rate === undefined) return undefined;
  if (!Number.isFinite(rate) || rate < 0 || rate > 1)
    throw new ConfigurationError({
      message: `Tracing sample rate '${sampleRate ?? fromEnv}' is not valid: use a number from 0 to 1 (LANGFUSE_SAMPLE_RATE or sampleRate)`,
    });
  return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(rate) });
}

/** Langfuse's rule for environment names. */
const ENVIRONMENT_NAME = /^(?!langfuse)[a-z0-9_-]{1,40}$/;

/**
 * The resource attributes that say which release and environment made the
 * spans: Langfuse reads `langfuse.release` and `langfuse.environment` from
 * the resource as well as from spans, so every exporter carries them at no
 * cost per span.
 */
function deploymentAttributes(release: string | undefined, environment: string | undefined) {
  const attributes: Record<string, string> = {};
  if (release !== undefined) {
    attributes['langfuse.release'] = release;
    attributes['service.version'] = release;
  }
  if (environment !== undefined) {
    if (!ENVIRONMENT_NAME.test(environment))
      throw new ConfigurationError({
        message: `Tracing environment '${environment}' is not valid: use lowercase letters, digits, '-' and '_' (at most 40), not starting with 'langfuse'`,
      });
    attributes['langfuse.environment'] = environment;
    attributes['deployment.environment.name'] = environment;
  }
  return attributes;
}

const disabled = (): TracingHandle => ({
  enabled: false,
  destinations: [],
  forceFlush: async () => {},
  shutdown: async () => {},
});

/**
 * Turns on tracing from the environment: with `LANGFUSE_PUBLIC_KEY` and
 * `LANGFUSE_SECRET_KEY` (and `LANGFUSE_BASE_URL`, default Langfuse Cloud) it
 * exports to Langfuse through {@link switchboardSpanProcessor}; with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) it exports every
 * span over OTLP/HTTP; both can be on. Then it registers a `NodeTracerProvider`
 * (and an AsyncLocalStorage context manager) globally — only when called,
 * never on import, and only if no other provider is registered. If one is
 * (your own `NodeSDK`), it warns and leaves it alone: add
 * `switchboardSpanProcessor()` to that SDK instead.
 *
 * Nothing configured → a disabled handle; tracing then costs next to nothing.
 * Throws `ConfigurationError` for half a Langfuse key pair or an unsupported protocol.
 *
 * @example
 * ```ts
 * import { setupTracing } from '@switchboard/runtime/otel';
 * const app = new App({ name: 'support', agents, tracing: setupTracing() });
 * // app.close() flushes and shuts tracing down
 * ```
 */
export function setupTracing(options: SetupTracingOptions = {}): TracingHandle {
  const {
    env = process.env,
    spanProcessors = [],
    onWarning = (message: string) => console.warn(message),
  } = options;
  const processors: SpanProcessor[] = [];
  const destinations: string[] = [];
  const release = options.release ?? (env.LANGFUSE_RELEASE || undefined);
  const environment = options.environment ?? (env.LANGFUSE_TRACING_ENVIRONMENT || undefined);
  const deployment = deploymentAttributes(release, environment);
  const sampler = samplerFor(options.sampleRate, env);
  const langfuse =
    options.langfuse === false
      ? undefined
      : langfuseProcessor({ release, environment, ...options.langfuse }, env);
  if (langfuse) {
    processors.push(langfuse);
    destinations.push('langfuse');
  }
  const otlp = options.otlp === false ? undefined : otlpProcessor(options.otlp ?? {}, env);
  if (otlp) {
    processors.push(otlp);
    destinations.push('otlp');
  }
  if (spanProcessors.length > 0) {
    processors.push(...spanProcessors);
    destinations.push('custom');
  }
  if (processors.length === 0) return disabled();
  if (hasGlobalTracerProvider()) {
    onWarning(
      'Switchboard tracing: another OpenTelemetry tracer provider is already registered (e.g. NodeSDK), so setupTracing() did not register its own. ' +
        "Add switchboardSpanProcessor() from '@switchboard/runtime/otel' to that SDK's spanProcessors to send Switchboard's spans to Langfuse.",
    );
    void Promise.allSettled(processors.map((processor) => processor.shutdown()));
    return disabled();
  }
  const serviceName = options.serviceName ?? env.OTEL_SERVICE_NAME ?? 'switchboard';
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': serviceName, ...deployment })),
    spanProcessors: processors,
    ...(sampler ? { sampler } : {}),
  });
  const unregister = registerGlobally(provider);
  let stopping: Promise<void> | undefined;
  return {
    enabled: true,
    destinations,
    provider,
    forceFlush: () => provider.forceFlush(),
    shutdown: () => {
      stopping ??= provider.shutdown().finally(unregister);
      return stopping;
    },
  };
}
