import { type DiagLogger, DiagLogLevel, diag } from '@opentelemetry/api';
import { afterEach, beforeEach } from 'vitest';

export interface LoggedLine {
  level: 'error' | 'warn' | 'info';
  text: string;
}

/**
 * Captures what the exporter logs through OpenTelemetry's diag API (info and above) for every
 * test of the calling file; the returned array is emptied before each test.
 */
export function captureDiag(): LoggedLine[] {
  const lines: LoggedLine[] = [];
  const logger: DiagLogger = {
    error: (text) => lines.push({ level: 'error', text }),
    warn: (text) => lines.push({ level: 'warn', text }),
    info: (text) => lines.push({ level: 'info', text }),
    debug: () => {},
    verbose: () => {},
  };
  beforeEach(() => {
    lines.length = 0;
    diag.setLogger(logger, { logLevel: DiagLogLevel.INFO, suppressOverrideMessage: true });
  });
  afterEach(() => diag.disable());
  return lines;
}
