import { describeFaultFamily } from '../support/conformance-selftest';

/** The conformance suite catches each fault of this family (see test/support/conformance-selftest.ts). */
describeFaultFamily('clients', 'what the public IX-API clients rely on');
