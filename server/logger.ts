import pino, { Logger } from 'pino';

export type { Logger };

/** Structured JSON lines. API keys never reach the log: the auth header is redacted. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'apiKey', 'password'], censor: '[redacted]' },
  });
}
