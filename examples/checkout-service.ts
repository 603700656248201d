import {
  type Context,
  type Counter,
  context,
  type Histogram,
  type Meter,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
  type UpDownCounter,
  ValueType,
} from '@opentelemetry/api';

/**
 * What the service logs to: a logger of the OpenTelemetry logs API (in @opentelemetry/api from
 * OpenTelemetry JS 3.x on, in @opentelemetry/api-logs before), as far as the service uses it.
 */
export interface ServiceLogger {
  emit(record: {
    severityNumber?: number;
    severityText?: string;
    body?: string;
    attributes?: Record<string, string | number>;
    /** Milliseconds since the epoch. */
    timestamp?: number;
    /** The request's: its span's trace and span ids go into the record. */
    context?: Context;
  }): void;
}

/** OpenTelemetry's SeverityNumber values the service logs at. */
const SEVERITY = { INFO: 9, WARN: 13, ERROR: 17 } as const;

/** Recorded with an exponential histogram: the demo's MeterProvider selects it with a View. */
export const ORDER_VALUE_METRIC = 'checkout.order.value';

const REGIONS = ['eu-west-1', 'us-east-1', 'ap-southeast-2'] as const;
type Region = (typeof REGIONS)[number];

const PAYMENT_METHODS = ['card', 'paypal', 'apple_pay'] as const;

interface Route {
  method: 'GET' | 'POST';
  route: string;
  /** Share of the traffic. */
  weight: number;
  /** Median latency in seconds. */
  median: number;
  /** Status code of a success, and the chance and code of the route's typical client error. */
  ok: number;
  clientError?: { chance: number; status: number };
}

const ROUTES: readonly Route[] = [
  {
    method: 'GET',
    route: '/products/{id}',
    weight: 45,
    median: 0.012,
    ok: 200,
    clientError: { chance: 0.03, status: 404 },
  },
  { method: 'GET', route: '/cart', weight: 25, median: 0.008, ok: 200 },
  {
    method: 'POST',
    route: '/cart/items',
    weight: 15,
    median: 0.021,
    ok: 201,
    clientError: { chance: 0.02, status: 400 },
  },
  {
    method: 'POST',
    route: '/checkout',
    weight: 10,
    median: 0.18,
    ok: 200,
    clientError: { chance: 0.04, status: 402 },
  },
  { method: 'GET', route: '/health', weight: 5, median: 0.001, ok: 200 },
];
const TOTAL_WEIGHT = ROUTES.reduce((sum, r) => sum + r.weight, 0);

/** Bucket boundaries the HTTP semantic conventions advise for request durations. */
const DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];

const TICK_MILLIS = 50;

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;

function pickRoute(): Route {
  let at = Math.random() * TOTAL_WEIGHT;
  for (const route of ROUTES) {
    at -= route.weight;
    if (at < 0) return route;
  }
  return ROUTES[0] as Route;
}

/** A log-normal sample around `median`: latencies and order values have long right tails. */
function logNormal(median: number, sigma: number): number {
  const gaussian =
    Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
  return median * Math.exp(sigma * gaussian);
}

/**
 * A pretend checkout service: serves random HTTP traffic across three regions and records it
 * with every kind of instrument (counter, up-down counter, observable gauge, histogram, and the
 * histogram that the demo's View turns into an exponential one).
 */
export class CheckoutService {
  /** Requests simulated so far. */
  requests = 0;
  readonly #requestsPerSecond: number;
  readonly #requestCount: Counter;
  readonly #duration: Histogram;
  readonly #orderValue: Histogram;
  readonly #activeCarts: UpDownCounter;
  readonly #carts = new Map<Region, number>(REGIONS.map((r) => [r, 0]));
  readonly #paymentQueue = new Map<Region, number>(REGIONS.map((r) => [r, 0]));
  #timer: NodeJS.Timeout | undefined;
  readonly #tracer: Tracer | undefined;
  readonly #logger: ServiceLogger | undefined;

  /** With a tracer and a logger, each request is a span too, and failures and orders are logged. */
  constructor(
    meter: Meter,
    requestsPerSecond = 120,
    telemetry: { tracer?: Tracer; logger?: ServiceLogger } = {},
  ) {
    this.#requestsPerSecond = requestsPerSecond;
    this.#tracer = telemetry.tracer;
    this.#logger = telemetry.logger;
    this.#requestCount = meter.createCounter('checkout.requests', {
      description: 'HTTP requests served',
      unit: '{request}',
      valueType: ValueType.INT,
    });
    this.#duration = meter.createHistogram('http.server.request.duration', {
      description: 'Duration of HTTP server requests',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.#orderValue = meter.createHistogram(ORDER_VALUE_METRIC, {
      description: 'Value of completed orders',
      unit: 'USD',
    });
    this.#activeCarts = meter.createUpDownCounter('checkout.carts.active', {
      description: 'Shopping carts that are open',
      unit: '{cart}',
      valueType: ValueType.INT,
    });
    meter
      .createObservableGauge('checkout.payment.queue.depth', {
        description: 'Payments waiting for the payment provider',
        unit: '{payment}',
        valueType: ValueType.INT,
      })
      .addCallback((result) => {
        for (const [region, depth] of this.#paymentQueue) {
          result.observe(depth, { 'cloud.region': region });
        }
      });
  }

  start(): void {
    this.#timer ??= setInterval(() => this.#tick(), TICK_MILLIS);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    // Jitter the load by +-50% so the rate looks alive.
    const expected = (this.#requestsPerSecond * TICK_MILLIS) / 1000;
    const count = Math.round(expected * (0.5 + Math.random()));
    for (let i = 0; i < count; i++) this.#serve(pick(REGIONS));
    for (const [region, depth] of this.#paymentQueue) {
      this.#paymentQueue.set(region, Math.max(0, depth + Math.round(Math.random() * 4 - 2)));
    }
  }

  #serve(region: Region): void {
    const route = pickRoute();
    let status = route.ok;
    let seconds = logNormal(route.median, 0.6);
    const roll = Math.random();
    if (roll < 0.004) {
      status = 503; // an upstream timed out
      seconds = 2 + Math.random() * 3;
    } else if (roll < 0.012) {
      status = 500;
    } else if (route.clientError !== undefined && roll < 0.012 + route.clientError.chance) {
      status = route.clientError.status;
    }
    this.requests++;
    const attributes = {
      'http.request.method': route.method,
      'http.route': route.route,
      'http.response.status_code': status,
      'cloud.region': region,
    };
    this.#requestCount.add(1, attributes);
    this.#duration.record(seconds, attributes);
    // The request ends now: its span, and the records it logs.
    const end = Date.now();
    const request = this.#trace(route, status, seconds, end, attributes);
    if (status >= 500) {
      this.#log(
        request,
        end,
        'ERROR',
        `${route.method} ${route.route} failed with ${status}`,
        attributes,
      );
    } else if (status >= 400) {
      this.#log(
        request,
        end,
        'WARN',
        `${route.method} ${route.route} refused with ${status}`,
        attributes,
      );
    }
    if (status >= 300) return;

    const carts = this.#carts.get(region) ?? 0;
    if (route.route === '/cart/items' && Math.random() < 0.4) {
      this.#changeCarts(region, carts, +1);
    } else if (route.route === '/checkout') {
      if (carts > 0) this.#changeCarts(region, carts, -1);
      const usd = Math.round(logNormal(64, 0.8) * 100) / 100;
      const order = { 'cloud.region': region, 'payment.method': pick(PAYMENT_METHODS) };
      this.#orderValue.record(usd, order);
      this.#log(request, end, 'INFO', 'order placed', { ...order, 'order.value_usd': usd });
    } else if (carts > 0 && Math.random() < 0.01) {
      this.#changeCarts(region, carts, -1); // abandoned
    }
  }

  /**
   * A server span of the request's simulated duration, ending at `end`; /checkout pays inside it.
   * Returns the request's context, with its span: what the request logs carries its ids.
   */
  #trace(
    route: Route,
    status: number,
    seconds: number,
    end: number,
    attributes: Record<string, string | number>,
  ): Context {
    if (this.#tracer === undefined) return context.active();
    const start = end - seconds * 1000;
    const span = this.#tracer.startSpan(`${route.method} ${route.route}`, {
      kind: SpanKind.SERVER,
      startTime: start,
      attributes,
    });
    const request = trace.setSpan(context.active(), span);
    if (route.route === '/checkout') {
      const payment = this.#tracer.startSpan(
        'payment.authorize',
        { kind: SpanKind.CLIENT, startTime: start + seconds * 200 },
        request,
      );
      payment.end(start + seconds * 900);
    }
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${status}` });
    span.end(end);
    return request;
  }

  /**
   * A log record of the request: in `request`'s context, as an instrumented service's records
   * are in the active one (given here, since the demo runs no context manager), at the request's
   * end: the time its span ends (the SDK's own clock drifts from Date.now()).
   */
  #log(
    request: Context,
    end: number,
    level: keyof typeof SEVERITY,
    body: string,
    attributes: Record<string, string | number>,
  ): void {
    this.#logger?.emit({
      severityNumber: SEVERITY[level],
      severityText: level,
      body,
      attributes,
      timestamp: end,
      context: request,
    });
  }

  #changeCarts(region: Region, carts: number, by: 1 | -1): void {
    this.#carts.set(region, carts + by);
    this.#activeCarts.add(by, { 'cloud.region': region });
  }
}
