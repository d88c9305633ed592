// The structured server log (pino, one JSON object per line). Never given passwords, hashes,
// tokens or secrets; request logs carry the request id.

import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  readonly level?: LogLevel;
  /** Default: stdout, written synchronously so a crash loses nothing. */
  readonly destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'password',
          '*.password',
          'secret',
          '*.secret',
          'token',
          '*.token',
          'authorization',
          '*.authorization',
        ],
        censor: '[redacted]',
      },
    },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
