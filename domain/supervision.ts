/** The fixed id of the one workflow that supervises the fabric's processes and devices. */
export const FABRIC_SUPERVISOR_WORKFLOW_ID = 'ixapi:fabric:supervisor';
