import { context, isSpanContextValid, type Span, trace } from '@opentelemetry/api';
import { isPromiseLike } from '../promise-like.js';
import {
  type ObservationType,
  recordError,
  SpanAttribute,
  setSessionAttributes,
  toJson,
} from './span-attributes.js';
import { spanTime } from './span-clock.js';
import { TRACER_NAME } from './spans.js';

/** The instrumentation scope of spans created by {@link observe}. */
export const OBSERVE_TRACER_NAME = `${TRACER_NAME}.observe`;

/** Options of {@link observe}. */
export interface ObserveOptions {
  /** The span (observation) name; defaults to the method or function name. */
  name?: string;
  /** Record the arguments as the observation input (default true): one argument as is, several as an array. */
  captureInput?: boolean;
  /** Record the return value (awaited, for a promise) as the observation output (default true). */
  captureOutput?: boolean;
  /** The Langfuse observation type (default `span`). */
  type?: ObservationType;
}

/** A standard (TC39) method decorator, as returned by `observe(options)`. */
export type ObserveMethodDecorator = <This, Args extends unknown[], Return>(
  method: (this: This, ...args: Args) => Return,
  context: ClassMethodDecoratorContext<This, (this: This, ...args: Args) => Return>,
) => (this: This, ...args: Args) => Return;

// `never[]` parameters accept every function type, whatever its parameters.
type AnyFunction = (...args: never[]) => unknown;

function isIterator(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && (Symbol.asyncIterator in value || Symbol.iterator in value)
  );
}

function finish(span: Span, value: unknown, captureOutput: boolean): void {
  // An iterator's values arrive after the call returns: the span covers the call only.
  if (captureOutput && !isIterator(value)) {
    const output = toJson(value);
    if (output !== undefined) span.setAttribute(SpanAttribute.observationOutput, output);
  }
  span.end(spanTime());
}

function runObserved(
  name: string,
  options: ObserveOptions,
  args: readonly unknown[],
  invoke: () => unknown,
): unknown {
  const { captureInput = true, captureOutput = true, type = 'span' } = options;
  const parent = context.active();
  const span = trace.getTracer(OBSERVE_TRACER_NAME).startSpan(name, { startTime: spanTime() }, parent);
  if (!span.isRecording()) {
    // No provider: skip the context switch. A sampled-out span still becomes the parent, as OTel expects.
    if (!isSpanContextValid(span.spanContext())) return invoke();
    span.end(spanTime());
    return context.with(trace.setSpan(parent, span), invoke);
  }
  setSessionAttributes(span);
  span.setAttribute(SpanAttribute.observationType, type);
  if (captureInput) {
    const input = toJson(args.length === 1 ? args[0] : args);
    if (input !== undefined) span.setAttribute(SpanAttribute.observationInput, input);
  }
  let result: unknown;
  try {
    result = context.with(trace.setSpan(parent, span), invoke);
  } catch (error) {
    recordError(span, error);
    span.end(spanTime());
    throw error;
  }
  if (!isPromiseLike(result)) {
    finish(span, result, captureOutput);
    return result;
  }
  return Promise.resolve(result).then(
    (value) => {
      finish(span, value, captureOutput);
      return value;
    },
    (error: unknown) => {
      recordError(span, error);
      span.end(spanTime());
      throw error;
    },
  );
}

function decorator(options: ObserveOptions): ObserveMethodDecorator {
  return function decorate<This, Args extends unknown[], Return>(
    method: (this: This, ...args: Args) => Return,
    decoratorContext: ClassMethodDecoratorContext<This, (this: This, ...args: Args) => Return>,
  ) {
    const methodName =
      typeof decoratorContext.name === 'symbol'
        ? (decoratorContext.name.description ?? 'anonymous')
        : decoratorContext.name;
    const name = options.name ?? methodName;
    return function observed(this: This, ...args: Args): Return {
      return runObserved(name, options, args, () => method.apply(this, args)) as Return;
    };
  };
}

/**
 * Traces your own code as a span (a Langfuse observation) nested under the
 * active span — inside `handleMessage`, that is the current routing
 * decision. Records the input and output (each can be turned off), awaits
 * promises, and records a throw or rejection as an error before rethrowing.
 * With tracing off it only calls through.
 *
 * Two forms: `observe(fn, options?)` wraps a function (sync or async, `this`
 * preserved); `@observe(options?)` decorates a method. The decorator is a
 * standard (TC39) decorator: TypeScript 5+ without `experimentalDecorators`,
 * lowered by tsx/esbuild. (Vite 8 / Vitest 4 leave decorators to the runtime,
 * which Node 20 lacks: lower them with esbuild in a Vite plugin, or use the
 * function form.)
 *
 * @example
 * ```ts
 * class Router extends AbstractOrchestrator {
 *   @observe({ name: 'select-agent', captureInput: false })
 *   async selectAgent(text: string) { … }
 *
 *   protected async handleMessage(conversation: Conversation) {
 *     const agent = await this.selectAgent(currentUserMessage(conversation).content);
 *     …
 *   }
 * }
 *
 * const classify = observe(async (text: string) => model.classify(text), { name: 'classify', type: 'generation' });
 * ```
 */
export function observe<F extends AnyFunction>(fn: F, options?: ObserveOptions): F;
/** Returns a standard method decorator; see the function form above. */
export function observe(options?: ObserveOptions): ObserveMethodDecorator;
export function observe(
  fnOrOptions?: AnyFunction | ObserveOptions,
  maybeOptions: ObserveOptions = {},
): unknown {
  if (typeof fnOrOptions !== 'function') return decorator(fnOrOptions ?? {});
  const fn = fnOrOptions;
  const name = maybeOptions.name ?? (fn.name || 'anonymous');
  const observed = function observed(this: unknown, ...args: unknown[]): unknown {
    return runObserved(name, maybeOptions, args, () => Reflect.apply(fn, this, args));
  };
  Object.defineProperty(observed, 'name', { value: fn.name, configurable: true });
  return observed;
}
