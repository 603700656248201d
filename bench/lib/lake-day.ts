/**
 * A day of a small shop's traffic for the lake's lookup benchmark (bench/lake-lookups.ts): services
 * that call each other over HTTP and call their databases, each run as a few instances (one
 * resource each, as one process's SDK has), making traces of 5–30 spans (HTTP server and client
 * spans, database client spans) and the log records of those requests, in the traces' context.
 *
 * Every span and record is the shape the SDK hands an exporter (SpanLike, LogRecordLike: the
 * fields of ReadableSpan and ReadableLogRecord, ids as hex), made here without the SDK so that a
 * day of them costs little more than its export. Deterministic: the same seed makes the same day.
 *
 * Each trace lies within the minute it starts in (it starts in the minute's first 55 s and lasts
 * under 5 s), so its spans and records are exported in that minute's batches, and a batch filed
 * under its hour holds only that hour's items.
 */
import type { LogRecordLike } from '../../src/signals/logs/log-record.js';
import type { ResourceLike } from '../../src/signals/otlp-groups.js';
import type { SpanLike } from '../../src/signals/traces/span.js';
import { prng } from '../../test/support/prng.js';

/** The API's SpanKind and SpanStatusCode values. */
const SERVER = 1;
const CLIENT = 2;
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;

export interface DayShape {
  /** UTC start of the day, milliseconds. */
  startMillis: number;
  hours: number;
  /** Services (at most SERVICE_NAMES.length). */
  services: number;
  instancesPerService: number;
  /** Mean traces started per second, over the day (a diurnal curve around it). */
  tracesPerSecond: number;
  seed: number;
}

/** One process: a service's instance, with its resource (one object, as one SDK's). */
export interface Instance {
  index: number;
  service: string;
  resource: ResourceLike;
}

export interface DaySpan {
  instance: number;
  span: SpanLike;
}
export interface DayLog {
  instance: number;
  record: LogRecordLike;
}
export interface Trace {
  traceId: string;
  spans: DaySpan[];
  logs: DayLog[];
}

/** Twenty services: three entry points and the services behind them; those with a database say which. */
export const SERVICE_NAMES = [
  'frontend',
  'mobile-gateway',
  'partner-api',
  'cart',
  'checkout',
  'payments',
  'catalog',
  'search',
  'recommendations',
  'inventory',
  'pricing',
  'shipping',
  'users',
  'auth',
  'orders',
  'notifications',
  'reviews',
  'ads',
  'currency',
  'fraud',
] as const;
const ENTRY_SERVICES = 3;
const DATABASES: Record<string, { system: string; namespace: string; tables: string[] }> = {
  frontend: { system: 'redis', namespace: '4', tables: ['sessions'] },
  'mobile-gateway': { system: 'redis', namespace: '5', tables: ['sessions'] },
  'partner-api': { system: 'redis', namespace: '6', tables: ['api_keys'] },
  cart: { system: 'redis', namespace: '0', tables: ['cart'] },
  checkout: { system: 'postgresql', namespace: 'checkout', tables: ['sessions', 'attempts'] },
  payments: { system: 'postgresql', namespace: 'payments', tables: ['charges', 'refunds'] },
  catalog: { system: 'postgresql', namespace: 'catalog', tables: ['products', 'categories'] },
  search: { system: 'elasticsearch', namespace: 'products', tables: ['products'] },
  inventory: { system: 'postgresql', namespace: 'inventory', tables: ['stock', 'reservations'] },
  pricing: { system: 'redis', namespace: '1', tables: ['prices'] },
  shipping: { system: 'mysql', namespace: 'shipping', tables: ['rates', 'shipments'] },
  users: { system: 'postgresql', namespace: 'users', tables: ['users', 'addresses'] },
  auth: { system: 'redis', namespace: '2', tables: ['tokens'] },
  orders: { system: 'postgresql', namespace: 'orders', tables: ['orders', 'order_items'] },
  reviews: { system: 'mongodb', namespace: 'reviews', tables: ['reviews'] },
  ads: { system: 'redis', namespace: '3', tables: ['campaigns'] },
  fraud: { system: 'postgresql', namespace: 'fraud', tables: ['signals'] },
};
const ROUTES = [
  '/api/v1/cart/{id}',
  '/api/v1/checkout',
  '/api/v1/orders/{id}',
  '/api/v1/products/{id}',
  '/api/v1/products/search',
  '/api/v1/users/{id}',
  '/api/v1/recommendations',
  '/api/v1/reviews/{id}',
];
const METHODS = ['GET', 'GET', 'GET', 'GET', 'POST', 'PUT'];
const USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const HTTP_SCOPE = { name: '@opentelemetry/instrumentation-http', version: '0.208.0' };
const DB_SCOPES: Record<string, { name: string; version: string }> = {
  postgresql: { name: '@opentelemetry/instrumentation-pg', version: '0.61.0' },
  mysql: { name: '@opentelemetry/instrumentation-mysql2', version: '0.53.0' },
  redis: { name: '@opentelemetry/instrumentation-ioredis', version: '0.56.0' },
  mongodb: { name: '@opentelemetry/instrumentation-mongodb', version: '0.60.0' },
  elasticsearch: { name: '@opentelemetry/instrumentation-undici', version: '0.19.0' },
};
const LOG_SCOPE = { name: 'pino', version: '9.14.0' };

/** A leaf (database) call fails with this probability; the error goes up to the trace's root. */
const LEAF_ERROR_RATE = 0.005;

export const MIN_SPANS = 5;
export const MAX_SPANS = 30;

type Random = () => number;

/** Relative traffic at an hour of the day (UTC): a quiet night, a busy afternoon; mean 1. */
export function diurnal(hour: number): number {
  return 1 + 0.6 * Math.sin(((hour - 9) / 24) * 2 * Math.PI);
}

export class LakeDay {
  readonly instances: Instance[] = [];
  readonly #shape: DayShape;
  readonly #random: Random;
  /** Downstream services of each service (by index), fixed for the day. */
  readonly #calls: number[][] = [];

  constructor(shape: DayShape) {
    if (shape.services < ENTRY_SERVICES + 1 || shape.services > SERVICE_NAMES.length) {
      throw new Error(
        `services: ${shape.services} is not allowed: between ${ENTRY_SERVICES + 1} and ${SERVICE_NAMES.length}`,
      );
    }
    this.#shape = shape;
    this.#random = prng(shape.seed);
    for (let s = 0; s < shape.services; s++) {
      const service = SERVICE_NAMES[s] as string;
      for (let i = 0; i < shape.instancesPerService; i++) {
        this.instances.push({
          index: this.instances.length,
          service,
          resource: instanceResource(service, i, this.#hex(4)),
        });
      }
      // Entry points call 2–4 services; the others 0–2 of the services after them (no cycles).
      const after = Array.from(
        { length: shape.services - Math.max(s + 1, ENTRY_SERVICES) },
        (_, k) => Math.max(s + 1, ENTRY_SERVICES) + k,
      );
      const fanOut = s < ENTRY_SERVICES ? 2 + this.#int(3) : this.#int(3);
      const calls: number[] = [];
      while (calls.length < Math.min(fanOut, after.length)) {
        const c = after[this.#int(after.length)] as number;
        if (!calls.includes(c)) calls.push(c);
      }
      this.#calls.push(calls);
    }
    // Every service behind the entry points is called by one before it.
    for (let s = ENTRY_SERVICES; s < shape.services; s++) {
      if (this.#calls.some((calls) => calls.includes(s))) continue;
      (this.#calls[this.#int(s)] as number[]).push(s);
    }
  }

  get shape(): DayShape {
    return this.#shape;
  }

  /** The number of minutes of the day. */
  get minutes(): number {
    return Math.round(this.#shape.hours * 60);
  }

  /** The traces that start in minute `m` (0-based from the day's start), in start order. */
  tracesOfMinute(m: number): Trace[] {
    const hour = Math.floor(m / 60);
    const mean = this.#shape.tracesPerSecond * 60 * diurnal(hour);
    // Around the mean, ±10 %, so that minutes differ.
    const count = Math.max(1, Math.round(mean * (0.9 + 0.2 * this.#random())));
    const minuteStartNs = BigInt(this.#shape.startMillis + m * 60_000) * 1_000_000n;
    const starts = Array.from({ length: count }, () => Math.floor(this.#random() * 55e9)).sort(
      (a, b) => a - b,
    );
    return starts.map((offset) => this.#trace(minuteStartNs + BigInt(offset)));
  }

  #int(n: number): number {
    return Math.floor(this.#random() * n);
  }

  #hex(bytes: number): string {
    let s = '';
    for (let i = 0; i < bytes; i++) {
      s += ((this.#random() * 256) | 0).toString(16).padStart(2, '0');
    }
    return s;
  }

  #instanceOf(service: number): number {
    return service * this.#shape.instancesPerService + this.#int(this.#shape.instancesPerService);
  }

  #trace(startNs: bigint): Trace {
    const traceId = this.#hex(16);
    const trace: Trace = { traceId, spans: [], logs: [] };
    const entry = this.#int(ENTRY_SERVICES);
    const route = ROUTES[this.#int(ROUTES.length)] as string;
    const method = METHODS[this.#int(METHODS.length)] as string;
    // Spans left to make: 5–30 a trace, as the call tree allows.
    const budget = { left: MIN_SPANS + this.#int(MAX_SPANS - MIN_SPANS + 1) };
    this.#server(trace, entry, undefined, startNs, route, method, budget, true);
    return trace;
  }

  /**
   * A server span of `service` and what it does: database calls and calls to other services,
   * one after the other. Returns its end and whether it failed.
   */
  #server(
    trace: Trace,
    service: number,
    parent: string | undefined,
    startNs: bigint,
    route: string,
    method: string,
    budget: { left: number },
    entry: boolean,
  ): { endNs: bigint; error: boolean } {
    budget.left--;
    const instance = this.#instanceOf(service);
    const name = SERVICE_NAMES[service] as string;
    const spanId = this.#hex(8);
    let t = startNs + BigInt(200_000 + this.#int(800_000));
    let error = false;
    const db = DATABASES[name];
    const calls = this.#calls[service] ?? [];
    // Database calls (1–3 where there is a database) and downstream calls, interleaved.
    const steps: ('db' | number)[] = [];
    if (db !== undefined) for (let k = 1 + this.#int(3); k > 0; k--) steps.push('db');
    for (const c of calls) steps.splice(this.#int(steps.length + 1), 0, c);
    for (const step of steps) {
      if (budget.left <= 0) break;
      if (step === 'db' && db !== undefined) {
        budget.left--;
        const r = this.#database(trace, instance, db, spanId, t);
        t = r.endNs + BigInt(50_000);
        error ||= r.error;
      } else if (typeof step === 'number' && budget.left >= 2) {
        budget.left -= 1; // the client span; the callee's server span counts itself
        const r = this.#call(trace, instance, step, spanId, t, budget);
        t = r.endNs + BigInt(100_000);
        error ||= r.error;
      }
    }
    // A trace too small for its budget's minimum gets more database calls.
    while (entry && trace.spans.length + 1 < MIN_SPANS) {
      const r = this.#database(
        trace,
        instance,
        db ?? (DATABASES.frontend as (typeof DATABASES)[string]),
        spanId,
        t,
      );
      t = r.endNs + BigInt(50_000);
      error ||= r.error;
    }
    const endNs = t + BigInt(100_000 + this.#int(400_000));
    const status = error ? 500 : method === 'POST' ? 201 : 200;
    const path = route.replace('{id}', String(this.#int(1e6)));
    const attributes: Record<string, string | number> = {
      'http.request.method': method,
      'url.scheme': entry ? 'https' : 'http',
      'url.path': path,
      'http.route': route,
      'server.address': entry ? 'shop.example.com' : `${name}.shop.svc.cluster.local`,
      'server.port': entry ? 443 : 8080,
      'network.peer.address': `10.0.${this.#int(256)}.${this.#int(256)}`,
      'network.protocol.version': '1.1',
      'http.response.status_code': status,
    };
    if (entry) attributes['user_agent.original'] = USER_AGENT;
    const resource = (this.instances[instance] as Instance).resource;
    trace.spans.push({
      instance,
      span: span({
        traceId: trace.traceId,
        spanId,
        parent,
        name: `${method} ${route}`,
        kind: SERVER,
        startNs,
        endNs,
        error,
        message: error ? 'Internal Server Error' : undefined,
        attributes,
        resource,
        scope: HTTP_SCOPE,
        events: [],
      }),
    });
    const millis = Number((endNs - startNs) / 1_000_000n);
    if (this.#random() < 0.5) {
      trace.logs.push({
        instance,
        record: logRecord({
          traceId: trace.traceId,
          spanId,
          timeNs: startNs + 100_000n,
          severity: 9,
          body: `${method} ${path}: request received`,
          attributes: { 'http.request.method': method, 'http.route': route },
          resource: (this.instances[instance] as Instance).resource,
        }),
      });
    }
    trace.logs.push({
      instance,
      record: logRecord({
        traceId: trace.traceId,
        spanId,
        timeNs: endNs,
        severity: error ? 17 : 9,
        body: `${method} ${path} ${status} in ${millis} ms`,
        attributes: {
          'http.request.method': method,
          'http.route': route,
          'http.response.status_code': status,
          'duration.ms': millis,
        },
        resource,
      }),
    });
    return { endNs, error };
  }

  /** A client span in `instance` calling `callee`, and the callee's server span under it. */
  #call(
    trace: Trace,
    instance: number,
    callee: number,
    parent: string,
    startNs: bigint,
    budget: { left: number },
  ): { endNs: bigint; error: boolean } {
    const spanId = this.#hex(8);
    const method = METHODS[this.#int(METHODS.length)] as string;
    const route = ROUTES[this.#int(ROUTES.length)] as string;
    const host = `${SERVICE_NAMES[callee]}.shop.svc.cluster.local`;
    const served = this.#server(
      trace,
      callee,
      spanId,
      startNs + BigInt(300_000 + this.#int(700_000)),
      route,
      method,
      budget,
      false,
    );
    const endNs = served.endNs + BigInt(200_000 + this.#int(500_000));
    const status = served.error ? 500 : method === 'POST' ? 201 : 200;
    trace.spans.push({
      instance,
      span: span({
        traceId: trace.traceId,
        spanId,
        parent,
        name: method,
        kind: CLIENT,
        startNs,
        endNs,
        error: served.error,
        message: undefined,
        attributes: {
          'http.request.method': method,
          'server.address': host,
          'server.port': 8080,
          'url.full': `http://${host}:8080${route.replace('{id}', String(this.#int(1e6)))}`,
          'network.peer.address': `10.0.${this.#int(256)}.${this.#int(256)}`,
          'http.response.status_code': status,
        },
        resource: (this.instances[instance] as Instance).resource,
        scope: HTTP_SCOPE,
        events: [],
      }),
    });
    return { endNs, error: served.error };
  }

  /** A database client span; a failed one has an exception event and an ERROR log record. */
  #database(
    trace: Trace,
    instance: number,
    db: (typeof DATABASES)[string],
    parent: string,
    startNs: bigint,
  ): { endNs: bigint; error: boolean } {
    const spanId = this.#hex(8);
    const table = db.tables[this.#int(db.tables.length)] as string;
    const write = this.#random() < 0.2;
    const operation = db.system === 'redis' ? (write ? 'SET' : 'GET') : write ? 'UPDATE' : 'SELECT';
    const query =
      db.system === 'redis'
        ? `${operation} ${table}:?`
        : write
          ? `UPDATE ${table} SET updated_at = $1 WHERE id = $2`
          : `SELECT * FROM ${table} WHERE id = $1`;
    const endNs =
      startNs + BigInt(300_000 + this.#int(db.system === 'redis' ? 700_000 : 12_000_000));
    const error = this.#random() < LEAF_ERROR_RATE;
    const resource = (this.instances[instance] as Instance).resource;
    const message = `${db.system}: connection reset by peer`;
    trace.spans.push({
      instance,
      span: span({
        traceId: trace.traceId,
        spanId,
        parent,
        name: `${operation} ${db.namespace}.${table}`,
        kind: CLIENT,
        startNs,
        endNs,
        error,
        message: error ? message : undefined,
        attributes: {
          'db.system.name': db.system,
          'db.namespace': db.namespace,
          'db.operation.name': operation,
          'db.collection.name': table,
          'db.query.text': query,
          'server.address': `${db.system}-${db.namespace}.shop.svc.cluster.local`,
          'server.port': db.system === 'redis' ? 6379 : 5432,
        },
        resource,
        scope: DB_SCOPES[db.system] as { name: string; version: string },
        events: error
          ? [
              {
                time: hrTime(endNs),
                name: 'exception',
                attributes: { 'exception.type': 'Error', 'exception.message': message },
              },
            ]
          : [],
      }),
    });
    if (error) {
      trace.logs.push({
        instance,
        record: logRecord({
          traceId: trace.traceId,
          spanId,
          timeNs: endNs,
          severity: 17,
          body: `query on ${db.namespace}.${table} failed: ${message}`,
          attributes: { 'db.system.name': db.system, 'exception.type': 'Error' },
          resource,
        }),
      });
    }
    return { endNs, error };
  }
}

/** A process's resource: 15 attributes, as the SDK's detectors and a deployment give them. */
function instanceResource(service: string, i: number, suffix: string): ResourceLike {
  return {
    attributes: {
      'service.name': service,
      'service.namespace': 'shop',
      'service.version': '2.14.3',
      'service.instance.id': `${service}-${i}-${suffix}`,
      'deployment.environment.name': 'production',
      'host.name': `ip-10-0-${i}-${suffix.length}.eu-west-1.compute.internal`,
      'host.arch': 'amd64',
      'os.type': 'linux',
      'process.pid': 4242 + i,
      'process.runtime.name': 'nodejs',
      'process.runtime.version': '24.11.0',
      'k8s.namespace.name': 'shop',
      'k8s.pod.name': `${service}-7d9f8c6b5-${suffix}`,
      'telemetry.sdk.language': 'nodejs',
      'telemetry.sdk.version': '3.1.0',
    },
  };
}

const hrTime = (ns: bigint): [number, number] => [
  Number(ns / 1_000_000_000n),
  Number(ns % 1_000_000_000n),
];

function span(o: {
  traceId: string;
  spanId: string;
  parent: string | undefined;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  error: boolean;
  message: string | undefined;
  attributes: Record<string, string | number>;
  resource: ResourceLike;
  scope: { name: string; version: string };
  events: SpanLike['events'];
}): SpanLike {
  const context = { traceId: o.traceId, spanId: o.spanId, traceFlags: 1 };
  return {
    name: o.name,
    kind: o.kind,
    spanContext: () => context,
    parentSpanContext:
      o.parent === undefined ? undefined : { traceId: o.traceId, spanId: o.parent, traceFlags: 1 },
    startTime: hrTime(o.startNs),
    endTime: hrTime(o.endNs),
    status: o.error ? { code: STATUS_ERROR, message: o.message } : { code: STATUS_UNSET },
    attributes: o.attributes,
    links: [],
    events: o.events,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    resource: o.resource,
    instrumentationScope: o.scope,
  };
}

function logRecord(o: {
  traceId: string;
  spanId: string;
  timeNs: bigint;
  severity: number;
  body: string;
  attributes: Record<string, string | number>;
  resource: ResourceLike;
}): LogRecordLike {
  const time = hrTime(o.timeNs);
  return {
    hrTime: time,
    hrTimeObserved: time,
    spanContext: { traceId: o.traceId, spanId: o.spanId, traceFlags: 1 },
    severityText: o.severity >= 17 ? 'ERROR' : 'INFO',
    severityNumber: o.severity,
    body: o.body,
    attributes: o.attributes,
    droppedAttributesCount: 0,
    resource: o.resource,
    instrumentationScope: LOG_SCOPE,
  };
}

/** True for a span whose status is ERROR. */
export const isError = (s: SpanLike): boolean => s.status.code === STATUS_ERROR;
