import type { Config } from './config';
import { ConfigError } from './config-error';

/** The log formats a person can ask for; `auto` leaves the choice to chooseLogFormat. */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormatSetting = (typeof LOG_FORMATS)[number];
export type LogFormat = Exclude<LogFormatSetting, 'auto'>;

/**
 * The format log lines are shown in: LOG_FORMAT when it names one; otherwise pretty only for a
 * person at a terminal outside production. Production, pipes, log collectors and tests (no TTY)
 * get JSON, one object a line.
 */
export function chooseLogFormat(
  config: Pick<Config, 'logFormat' | 'nodeEnv'>,
  output: { isTTY?: boolean },
): LogFormat {
  if (config.logFormat !== 'auto') return config.logFormat;
  return output.isTTY === true && config.nodeEnv !== 'production' ? 'pretty' : 'json';
}

export function parseLogFormat(raw: string): LogFormatSetting {
  const format = LOG_FORMATS.find((candidate) => candidate === raw);
  if (!format) throw new ConfigError('LOG_FORMAT', `must be one of ${LOG_FORMATS.join(', ')}, got "${raw}"`);
  return format;
}
