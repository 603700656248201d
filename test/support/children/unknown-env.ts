/**
 * Builds two exporters from the environment and stops them, with no diag logger: what a service
 * whose OTEL_EXPORTER_S3_* variables hold a misspelled name prints on stderr. Prints one JSON
 * line when both are built and stopped.
 */
import { S3MetricExporter } from '../../../src/index.js';

const first = new S3MetricExporter();
const second = new S3MetricExporter();
await first.shutdown();
await second.shutdown();
console.log(JSON.stringify({ built: 2 }));
