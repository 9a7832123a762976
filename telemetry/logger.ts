import pino from 'pino';
import { activeTraceIds } from './tracing';

/**
 * JSON logs; credentials and tokens are never written, wherever they appear. A line written within
 * a traced request or activity carries its `trace_id` and `span_id`.
 */
export function createLogger(options: { level: string; name: string }) {
  return pino({
    name: options.name,
    level: options.level,
    mixin: activeTraceIds,
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
