import { type DiagLogger, DiagLogLevel, diag } from '@opentelemetry/api';
import { afterEach, beforeEach, vi } from 'vitest';

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

/** A process warning: what reaches stderr when nobody registered a diag logger. */
export interface ProcessWarning {
  code: string | undefined;
  text: string;
}

/**
 * Makes process.emitWarning push each warning onto `into` instead of printing it, until the
 * mocks are restored (vi.restoreAllMocks()).
 */
export function recordProcessWarnings(into: ProcessWarning[]): void {
  vi.spyOn(process, 'emitWarning').mockImplementation(((
    warning: string | Error,
    options?: { code?: string },
  ) => {
    into.push({ code: options?.code, text: String(warning) });
  }) as typeof process.emitWarning);
}
