/**
 * The read checks that catch each fault a read run shows (faults without `full`), found by running
 * every read check with each fault in turn. The self-test runs only these with the fault, and each
 * of them must catch it; a check named here that stops catching its fault fails the self-test, so
 * the table stays true. Where many checks catch a fault (a pagination header left out shows in every
 * paged collection), the first one or two in the suite's order stand for them.
 */
export type CaughtBy =
  | readonly string[]
  /** Checks that catch the fault only with the requests of others before them (`along`, which need not catch it). */
  | { by: readonly string[]; along: readonly string[] };

/** The checks a read run with the fault takes: those that must catch it, and those they need along. */
export function checksOf(caught: CaughtBy): { by: readonly string[]; along: readonly string[] } {
  return 'by' in caught ? caught : { by: caught, along: [] };
}

export const CAUGHT_IN_READS: Readonly<Record<string, CaughtBy>> = {
  'pagination-drop-limit': ['PAG-facilities_list', 'PAG-devices_list'],
  'pagination-drop-offset': ['PAG-facilities_list', 'PAG-devices_list'],
  'pagination-drop-items': ['PAG-facilities_list', 'CMB-facilities_list'],
  'pagination-drop-pages': ['PAG-facilities_list', 'PAG-devices_list'],
  'pagination-drop-page': ['PAG-facilities_list', 'PAG-devices_list'],
  'pagination-drop-token': ['PAG-facilities_list', 'PAG-devices_list'],
  'pagination-drop-next': ['PAG-facilities_list', 'CMB-facilities_list'],
  'pagination-wrong-items': ['PAG-facilities_list', 'CMB-facilities_list'],
  'pagination-wrong-page-number': ['PAG-facilities_list', 'PAG-devices_list'],
  'pagination-next-skips-page': ['PAG-facilities_list', 'CMB-facilities_list'],
  'pagination-next-repeats-page': ['PAG-facilities_list', 'CMB-facilities_list'],
  'pagination-token-never-changes': ['PAG-facilities_list', 'PAG-devices_list'],
  'pagination-bad-token-accepted': ['PAG-facilities_list', 'PAG-devices_list'],
  'pagination-206-as-200': ['PAG-facilities_list', 'CMB-facilities_list'],
  'pagination-ignore-limit': ['PAG-facilities_list', 'PAG-devices_list'],
  'pagination-page-gap': ['PAG-facilities_list', 'CMB-facilities_list'],
  'list-drop-last-item': ['PAG-facilities_list', 'FLT-facilities_list'],
  'list-duplicate-item': ['COL-facilities_list', 'PAG-facilities_list'],
  'list-item-missing-id': ['COL-facilities_list', 'READ-facilities_read'],
  'schema-integer-as-string': ['COL-facilities_list', 'READ-facilities_read'],
  'content-type-text-plain': ['DISC-001', 'COL-facilities_list'],
  'filter-ignore-id': ['FLT-facilities_list', 'FLT-devices_list'],
  'filter-id-first-only': ['FLT-facilities_list', 'FLT-devices_list'],
  'filter-ignore-properties': ['FLT-facilities_list', 'CMB-facilities_list'],
  'filter-first-only': ['CMB-product_offerings_list', 'STAT-001'],
  'filter-dropped-when-paging': ['CMB-facilities_list', 'CMB-devices_list'],
  'fields-ignored': ['FLD-product_offerings_list'],
  'filter-bad-value-accepted': ['FLT-facilities_list', 'FLT-devices_list'],
  'events-resource-ignored': ['EXT-002'],
  'query-unknown-parameter-rejected': ['COL-facilities_list', 'COL-devices_list'],
  'problem-missing-type': ['AUTH-002', 'ERR-001'],
  'problem-foreign-type': ['AUTH-002', 'ERR-001'],
  'problem-status-mismatch': ['AUTH-002', 'ERR-001'],
  'validation-missing-properties': ['ERR-002'],
  'error-as-html': ['AUTH-002', 'ERR-001'],
  'collection-500': ['COL-accounts_list'],
  'collection-404': ['DISC-004', 'COL-accounts_list'],
  'accept-invalid-body': ['ERR-002'],
  'read-not-found-as-null': ['READ-facilities_read', 'READ-devices_read'],
  'foreign-change-accepted': ['ISO-007'],
  'mutation-of-unknown-200': ['ISO-008'],
  'auth-long-credentials-500': ['AUTH-008'],
  'auth-token-200': ['AUTH-001'],
  'auth-refresh-200': ['AUTH-004'],
  'auth-token-missing-refresh': ['AUTH-001'],
  'auth-missing-token-403': ['SEC-facilities_list', 'SEC-pops_read'],
  // A refused token is swapped for the last one accepted: the other AUTH- checks make it one.
  'auth-expired-token-accepted': { by: ['AUTH-006', 'AUTH-007'], along: ['AUTH-'] },
  'auth-refresh-accepts-any-token': ['AUTH-005'],
  'implementation-declares-unrouted': ['DISC-002'],
  'implementation-missing-schema-version': ['DISC-001'],
  'health-status-ok': ['DISC-003'],
  'isolation-read-foreign-account': ['READ-accounts_read'],
  'isolation-leak-sensitive': ['ISO-001', 'ISO-002'],
  'isolation-service-leak-sensitive': ['FLT-network_services_list', 'ISO-006'],
  'isolation-id-filter-leak': ['ISO-003'],
  'pagination-default-ignored': ['COL-events_list'],
  'pagination-default-invented': ['COL-facilities_list'],
  'policy-charged-before-decommission': [
    'POL-connections_cancellation_policy_read',
    'POL-port_reservation_cancellation_policy_read',
  ],
  'policy-date-times': [
    'POL-connections_cancellation_policy_read',
    'POL-port_reservation_cancellation_policy_read',
  ],
  'policy-day-in-the-past': [
    'POL-connections_cancellation_policy_read',
    'POL-port_reservation_cancellation_policy_read',
  ],
  'policy-malformed-day-accepted': [
    'POL-connections_cancellation_policy_read',
    'POL-port_reservation_cancellation_policy_read',
  ],
  'policy-day-ignored': [
    'POL-connections_cancellation_policy_read',
    'POL-port_reservation_cancellation_policy_read',
  ],
  'loa-as-json': ['LOA-connections_loa_download', 'LOA-port_reservations_loa_download'],
  'loa-mislabelled': ['LOA-connections_loa_download', 'LOA-port_reservations_loa_download'],
  'loa-of-others-readable': ['LOA-connections_loa_download', 'LOA-port_reservations_loa_download'],
  'reservation-filter-leaks': ['FLT-port_reservations_list', 'PRES-001'],
  'connection-lists-unknown-reservation': ['PRES-001'],
  'statistics-reversed-window-accepted': ['STAT-001'],
  'statistics-accuracy-over-one': ['STAT-001'],
  // The 12th, 40th and 90th requests of the run are throttled: the collections make them.
  'throttle-without-retry-after': { by: ['RATE-002'], along: ['COL-'] },
  'throttle-not-a-problem': { by: ['RATE-001'], along: ['COL-'] },
  'idempotency-quoted-key-refused': ['IDEM-001'],
  'delete-null-body-refused': ['CLIENT-001'],
  'delete-empty-object-refused': ['CLIENT-001'],
  'accounts-external-ref-404': ['CLIENT-002'],
  'health-version-number': ['DISC-003', 'CLIENT-003'],
  'health-version-release': ['DISC-003', 'CLIENT-003'],
  'health-pass-503': ['CLIENT-003'],
  'auth-bearer-refused': ['CLIENT-004'],
  'content-type-stray-semicolon-415': ['CLIENT-005'],
  'content-type-charset-415': ['CLIENT-005'],
  'accept-stray-semicolon-406': ['CLIENT-005'],
  'auth-short-lived-token': ['CLIENT-006'],
  'ids-not-url-safe': ['CLIENT-007'],
};
