// JSON-lines logging (pino). One logger factory so every process logs the same shape:
// {"level":30,"time":...,"component":"pipeline","msg":...}. Secrets never pass through here.
import { pino, type Logger } from 'pino';

export type { Logger };

/** `dest`: a file descriptor (1 stdout, 2 stderr) or a file path to append to. */
export function createLogger(component: string, level = process.env.LOG_LEVEL ?? 'info', dest: 1 | 2 | string = 1): Logger {
  return pino(
    {
      level,
      base: { component },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['*.apiKey', '*.secret', '*["x-api-key"]', 'req.headers["x-api-key"]'], censor: '[redacted]' },
    },
    typeof dest === 'string' ? pino.destination({ dest, sync: true, append: true }) : pino.destination({ fd: dest, sync: true }),
  );
}
