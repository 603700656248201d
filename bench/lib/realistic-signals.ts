/**
 * Realistic spans and log records for the benchmarks, made by the real SDKs (so they are the
 * SDK's own objects, getters and all): HTTP server spans with the semantic-convention attributes,
 * one event each, and a service resource of 15 attributes; request log records with a string
 * body, 5 attributes and the trace context of their request.
 */
import { context, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  InMemoryLogRecordExporter,
  LoggerProvider,
  type ReadableLogRecord,
  SimpleLogRecordProcessor,
} from '@opentelemetry/sdk-logs';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { prng } from '../../test/support/prng.js';

const ROUTES = [
  '/api/v1/cart/{cartId}',
  '/api/v1/cart/{cartId}/items',
  '/api/v1/checkout',
  '/api/v1/orders',
  '/api/v1/orders/{orderId}',
  '/api/v1/products/{productId}',
  '/api/v1/products/search',
  '/api/v1/users/{userId}',
  '/healthz',
  '/graphql',
];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];
const STATUSES = [200, 200, 200, 200, 201, 204, 304, 400, 404, 500];
const USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** A service's resource: 15 attributes, as the SDK's detectors and a deployment give them. */
function serviceResource() {
  return resourceFromAttributes({
    'service.name': 'checkout',
    'service.namespace': 'shop',
    'service.version': '2.14.3',
    'service.instance.id': '8f3e1c2a-5b7d-4e9f-a1c3-2d4b6f8e0a1c',
    'deployment.environment.name': 'production',
    'host.name': 'ip-10-0-12-34.eu-west-1.compute.internal',
    'host.arch': 'amd64',
    'os.type': 'linux',
    'process.pid': 4242,
    'process.runtime.name': 'nodejs',
    'process.runtime.version': '24.11.0',
    'k8s.namespace.name': 'shop',
    'k8s.pod.name': 'checkout-7d9f8c6b5-x2k4p',
    'telemetry.sdk.language': 'nodejs',
    'telemetry.sdk.version': '3.1.0',
  });
}

/** The path of a request on `route`, with ids filled in. */
function pathOf(route: string, random: () => number): string {
  return route.replace(/\{[a-zA-Z]+\}/g, () => String(Math.floor(random() * 1e6)));
}

/** `count` HTTP server spans, in the order they ended. */
export async function realisticSpans(count: number): Promise<ReadableSpan[]> {
  const random = prng(7);
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: serviceResource(),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer('@opentelemetry/instrumentation-http', '0.208.0');
  for (let i = 0; i < count; i++) {
    const route = ROUTES[i % ROUTES.length] as string;
    const method = METHODS[Math.floor(random() * METHODS.length)] as string;
    const status = STATUSES[Math.floor(random() * STATUSES.length)] as number;
    const span = tracer.startSpan(`${method} ${route}`, {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': method,
        'url.scheme': 'https',
        'url.path': pathOf(route, random),
        'http.route': route,
        'server.address': 'shop.example.com',
        'server.port': 443,
        'client.address': `10.0.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}`,
        'network.peer.address': '10.0.3.17',
        'network.peer.port': 40_000 + Math.floor(random() * 20_000),
        'network.protocol.version': '1.1',
        'user_agent.original': USER_AGENT,
        'http.request.body.size': Math.floor(random() * 4096),
      },
    });
    span.addEvent('request.handled', { 'handler.name': 'ordersController', 'db.calls': 3 });
    span.setAttribute('http.response.status_code', status);
    if (status >= 500)
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'Internal Server Error' });
    span.end();
  }
  const spans = exporter.getFinishedSpans(); // before shutdown, which forgets them
  await provider.shutdown();
  return spans;
}

/** `count` request log records, each in the trace context of its request. */
export async function realisticLogRecords(count: number): Promise<ReadableLogRecord[]> {
  const random = prng(11);
  const exporter = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({
    resource: serviceResource(),
    processors: [new SimpleLogRecordProcessor({ exporter })],
  });
  const logger = provider.getLogger('checkout.http', '2.14.3');
  const hex = (bytes: number) =>
    Array.from({ length: bytes }, () =>
      Math.floor(random() * 256)
        .toString(16)
        .padStart(2, '0'),
    ).join('');
  for (let i = 0; i < count; i++) {
    const route = ROUTES[i % ROUTES.length] as string;
    const method = METHODS[Math.floor(random() * METHODS.length)] as string;
    const status = STATUSES[Math.floor(random() * STATUSES.length)] as number;
    const millis = Math.floor(random() * 250);
    const path = pathOf(route, random);
    logger.emit({
      severityNumber: status >= 500 ? 17 : 9, // ERROR, INFO
      severityText: status >= 500 ? 'ERROR' : 'INFO',
      body: `${method} ${path} ${status} in ${millis} ms`,
      attributes: {
        'http.request.method': method,
        'http.route': route,
        'http.response.status_code': status,
        'duration.ms': millis,
        'user.id': `u-${Math.floor(random() * 1e5)}`,
      },
      context: trace.setSpanContext(context.active(), {
        traceId: hex(16),
        spanId: hex(8),
        traceFlags: TraceFlags.SAMPLED,
      }),
    });
  }
  const records = exporter.getFinishedLogRecords();
  await provider.shutdown();
  return records;
}
