import { describeFaultFamily } from '../support/conformance-selftest';

/** The conformance suite catches each fault of this family (see test/support/conformance-selftest.ts). */
describeFaultFamily('general-2', 'the general faults, second half, and default page sizes');
