import pino, { Logger } from 'pino';
import { redactUrls } from './redact';

export type { Logger };

/**
 * Structured JSON lines, or readable single lines when stdout is a terminal (pino-pretty, written in this thread so
 * they keep their order with the first start's console lines). API keys never reach the log: the auth header
 * is redacted. Nor do the user info and query values of any URL a line quotes (a webhook endpoint's
 * `?hooksecret=`, an OAuth callback's code), whoever wrote it: each line is redacted on its way out.
 */
export function createLogger(level: string, pretty: boolean = process.stdout.isTTY === true): Logger {
  const options = {
    level,
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'apiKey', 'password'],
      censor: '[redacted]',
    },
  };
  if (!pretty) return pino(options, redacting(pino.destination(1)));
  // Loaded only for a terminal: a service writing JSON to a collector never needs it. A require, not import(): the
  // logger is made synchronously at start-up, and pino's worker-thread `transport` would lose the `sync` ordering.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const prettyStream = require('pino-pretty') as typeof import('pino-pretty');
  return pino(
    options,
    redacting(
      prettyStream({
        sync: true,
        singleLine: true,
        translateTime: 'SYS:HH:MM:ss',
        // A request line reads `GET /v1/authenticate 200 4 ms <request id>`, the workspace after it on the same line.
        ignore: 'pid,hostname,req,res,responseTime',
        messageFormat: (log, messageKey) => {
          const { req, res, responseTime } = log as {
            req?: { id?: string; method?: string; url?: string };
            res?: { statusCode?: number };
            responseTime?: number;
          };
          const message = typeof log[messageKey] === 'string' ? log[messageKey] : '';
          if (!req || !res) return message;
          return `${req.method} ${req.url} ${res.statusCode} ${responseTime} ms ${req.id}${message === 'request completed' ? '' : ` (${message})`}`;
        },
      }),
    ),
  );
}

/** A destination that writes each line with the URLs it quotes redacted. */
function redacting(out: { write(line: string): unknown }): pino.DestinationStream {
  return { write: (line: string) => void out.write(redactUrls(line)) };
}
