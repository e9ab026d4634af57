import pino from 'pino';

/** JSON logs on stdout. Secrets never reach a line: the paths below are censored wherever they appear. */
export function createLogger(level: string, destination?: pino.DestinationStream) {
  return pino(
    {
    level,
    base: { service: 'dispatch' },
    redact: {
      paths: [
        'authorization',
        '*.authorization',
        '*.headers.authorization',
        'plain_key',
        '*.plain_key',
        'signing_secret',
        '*.signing_secret',
        'adminToken',
        '*.adminToken',
        'password',
        '*.password',
        'config.password',
        'config.token',
      ],
      censor: '[redacted]',
    },
  },
    destination,
  );
}

export type Logger = ReturnType<typeof createLogger>;
