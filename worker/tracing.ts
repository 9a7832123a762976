import { startTracingOrExit } from '../telemetry/tracing';

/**
 * The worker's tracing, started when this module is loaded: worker/main.ts imports it before
 * anything else, so that the http and mysql2 modules it instruments are loaded after it.
 */
export const tracing = startTracingOrExit('ixapi-worker');
