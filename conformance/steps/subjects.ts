/**
 * The kinds of resource checks order, read and cancel, and the states of one that is going.
 */
/** A kind of resource as checks that read it back see it. */
export interface Readable {
  /** What reports call one of them. */
  noun: string;
  read: string;
}

/** A kind of resource that is cancelled under a cancellation policy. */
export interface Cancellable extends Readable {
  destroy: string;
  policy: string;
}

/** The operations on one kind of resource that is ordered, changed and cancelled. */
export interface Subject extends Cancellable {
  list: string;
  update: string;
  patch: string;
  loaDownload: string;
  loaUpload: string;
}

export const CONNECTIONS: Subject = {
  noun: 'connection',
  list: 'connections_list',
  read: 'connections_read',
  update: 'connections_update',
  patch: 'connections_partial_update',
  destroy: 'connections_destroy',
  policy: 'connections_cancellation_policy_read',
  loaDownload: 'connections_loa_download',
  loaUpload: 'connections_loa_upload',
};

export const PORT_RESERVATIONS: Subject = {
  noun: 'port reservation',
  list: 'port_reservations_list',
  read: 'port_reservations_read',
  update: 'port_reservations_update',
  patch: 'port_reservations_partial_update',
  destroy: 'port_reservations_destroy',
  policy: 'port_reservation_cancellation_policy_read',
  loaDownload: 'port_reservations_loa_download',
  loaUpload: 'port_reservations_loa_upload',
};

/** States of a resource whose cancellation was asked for and is under way or done. */
export const ENDING: readonly string[] = ['decommission_requested', 'decommissioned', 'cancelled'];
/** States in which a resource has a decommission day. */
export const DECOMMISSIONING: readonly string[] = ['decommission_requested', 'decommissioned'];
/** States of a resource that is going or gone. */
export const GOING: readonly string[] = [...ENDING, 'archived'];
