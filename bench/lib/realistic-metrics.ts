/**
 * Realistic ResourceMetrics for the benchmarks, built once through a real MeterProvider and a
 * reader that collects on demand: HTTP server series (counter, explicit-bucket histogram,
 * exponential histogram) with semantic-convention attributes, plus per-pod k8s gauges.
 */
import { ValueType } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AggregationType, MeterProvider, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { prng } from '../../test/support/prng.js';
import { CollectingReader } from '../../test/support/service.js';

const ROUTES = [
  '/',
  '/healthz',
  '/readyz',
  '/metrics',
  '/api/v1/cart',
  '/api/v1/cart/{cartId}',
  '/api/v1/cart/{cartId}/items',
  '/api/v1/cart/{cartId}/items/{itemId}',
  '/api/v1/checkout',
  '/api/v1/checkout/{orderId}/confirm',
  '/api/v1/orders',
  '/api/v1/orders/{orderId}',
  '/api/v1/orders/{orderId}/cancel',
  '/api/v1/orders/{orderId}/refund',
  '/api/v1/payments',
  '/api/v1/payments/{paymentId}',
  '/api/v1/products',
  '/api/v1/products/{productId}',
  '/api/v1/products/{productId}/reviews',
  '/api/v1/products/search',
  '/api/v1/users/{userId}',
  '/api/v1/users/{userId}/addresses',
  '/api/v1/users/{userId}/preferences',
  '/api/v1/session',
  '/api/v1/session/refresh',
  '/api/v2/catalog/{categoryId}',
  '/api/v2/catalog/{categoryId}/products',
  '/api/v2/recommendations',
  '/api/v2/inventory/{sku}',
  '/api/v2/shipping/quote',
  '/api/v2/shipping/{shipmentId}/track',
  '/api/v2/coupons/{code}',
  '/graphql',
  '/webhooks/stripe',
  '/webhooks/github',
  '/static/{path}',
  '/login',
  '/logout',
  '/oauth/callback',
  '/admin/reports/{reportId}',
];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE'];
const STATUSES = [200, 201, 204, 301, 304, 400, 401, 404, 429, 500];
const NAMESPACES = ['checkout', 'payments', 'catalog', 'identity', 'shipping'];
/** Semantic-convention bucket boundaries of http.server.request.duration. */
const DURATION_BOUNDARIES = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];

/** The i-th distinct HTTP attribute set: route × method × status within one upstream host. */
function httpAttributes(i: number): Record<string, string | number> {
  const combos = ROUTES.length * METHODS.length * STATUSES.length;
  const host = Math.floor(i / combos);
  const r = i % combos;
  return {
    'http.route': ROUTES[r % ROUTES.length] as string,
    'http.request.method': METHODS[Math.floor(r / ROUTES.length) % METHODS.length] as string,
    'http.response.status_code': STATUSES[
      Math.floor(r / (ROUTES.length * METHODS.length))
    ] as number,
    'server.address': `${NAMESPACES[host % NAMESPACES.length]}-${host}.svc.cluster.local`,
    'server.port': 8080,
    'url.scheme': 'http',
    'network.protocol.version': '1.1',
  };
}

function podAttributes(i: number): Record<string, string> {
  const namespace = NAMESPACES[i % NAMESPACES.length] as string;
  const replica = Math.floor(i / NAMESPACES.length);
  const hash = ((replica * 2654435761) >>> 0).toString(36).padStart(7, '0').slice(-7);
  return {
    'k8s.namespace.name': namespace,
    'k8s.pod.name': `${namespace}-api-7f9c6d5b8-${hash}`,
    'k8s.node.name': `ip-10-0-${replica % 32}-${replica % 250}.eu-west-1.compute.internal`,
    'k8s.container.name': 'api',
  };
}

/** Share of the series per instrument: what one HTTP service plus its pods report. */
const SHARE = { counter: 0.35, histogram: 0.3, expHistogram: 0.15 };

export interface RealisticSource {
  /** Records one more interval of traffic (values change between collections, as in production). */
  record(): void;
  /** One collection: `series` data points in all (cumulative temporality). */
  collect(): Promise<ResourceMetrics>;
  shutdown(): Promise<void>;
}

/** A provider whose every collection holds exactly `series` data points. */
export function realisticSource(series: number, seed = 1): RealisticSource {
  const random = prng(seed);
  // The SDK's default cardinality limit (2000 per metric; views have their own) would fold the
  // rest into one overflow series.
  const reader = new CollectingReader({ cardinalitySelector: () => series + 1 });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({
      'service.name': 'checkout-api',
      'service.namespace': 'shop',
      'service.version': '4.12.3',
      'service.instance.id': '2b0a6f1e-8c1d-4e4f-9d7a-5f3c2a1b0c9d',
      'deployment.environment.name': 'production',
      'k8s.namespace.name': 'checkout',
      'k8s.pod.name': 'checkout-api-7f9c6d5b8-x2k4q',
      'k8s.deployment.name': 'checkout-api',
      'k8s.node.name': 'ip-10-0-12-34.eu-west-1.compute.internal',
      'host.name': 'checkout-api-7f9c6d5b8-x2k4q',
      'cloud.provider': 'aws',
      'cloud.region': 'eu-west-1',
      'telemetry.sdk.language': 'nodejs',
      'telemetry.sdk.name': 'opentelemetry',
      'telemetry.sdk.version': '2.12.0',
    }),
    readers: [reader],
    views: [
      {
        instrumentName: 'http.server.response.body.size',
        aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM },
        aggregationCardinalityLimit: series + 1,
      },
      {
        instrumentName: 'http.server.request.duration',
        aggregation: {
          type: AggregationType.EXPLICIT_BUCKET_HISTOGRAM,
          options: { boundaries: DURATION_BOUNDARIES },
        },
        aggregationCardinalityLimit: series + 1,
      },
    ],
  });
  const meter = provider.getMeter('@opentelemetry/instrumentation-http', '0.203.0');
  const counters = Math.round(series * SHARE.counter);
  const histograms = Math.round(series * SHARE.histogram);
  const expHistograms = Math.round(series * SHARE.expHistogram);
  const pods = series - counters - histograms - expHistograms;
  const requests = meter.createCounter('http.server.requests', {
    unit: '{request}',
    description: 'Number of HTTP server requests.',
    valueType: ValueType.INT,
  });
  const duration = meter.createHistogram('http.server.request.duration', {
    unit: 's',
    description: 'Duration of HTTP server requests.',
  });
  const bodySize = meter.createHistogram('http.server.response.body.size', {
    unit: 'By',
    description: 'Size of HTTP server response bodies.',
  });
  const podAttrs = Array.from({ length: pods }, (_, i) => podAttributes(i));
  const memory = new Float64Array(pods).map(() => 2e8 + random() * 6e8);
  meter
    .createObservableGauge('k8s.pod.memory.working_set', {
      unit: 'By',
      description: 'Working set memory of the pod.',
      valueType: ValueType.INT,
    })
    .addCallback((result) => {
      for (let i = 0; i < pods; i++) {
        result.observe(Math.round(memory[i] as number), podAttrs[i]);
      }
    });
  const httpAttrs = Array.from({ length: Math.max(counters, histograms, expHistograms) }, (_, i) =>
    httpAttributes(i),
  );
  const latency = () => Math.exp(Math.log(0.04) + 1.1 * (random() * 2 - 1) + random() * random());
  const record = () => {
    for (let i = 0; i < counters; i++) requests.add(1 + Math.floor(random() * 20), httpAttrs[i]);
    for (let i = 0; i < histograms; i++) {
      for (let k = 0; k < 4; k++) duration.record(latency(), httpAttrs[i]);
    }
    for (let i = 0; i < expHistograms; i++) {
      for (let k = 0; k < 4; k++)
        bodySize.record(Math.floor(200 + random() * 40_000), httpAttrs[i]);
    }
    for (let i = 0; i < pods; i++) memory[i] = (memory[i] as number) * (0.98 + random() * 0.04);
  };
  record();
  return {
    record,
    async collect() {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new Error(`collection failed: ${String(errors[0])}`);
      return resourceMetrics;
    },
    shutdown: () => provider.shutdown(),
  };
}
