/**
 * The cloud-provider contract. A cloud service (`cloud_vc`) is delivered with the provider's help:
 * in the `exchange_first` workflow the exchange makes the circuit at the provider for the customer;
 * in `provider_first` the customer made it already and the exchange looks it up by its key and
 * accepts it. Either way each handover is connected at the provider once the exchange's side of it
 * is configured, bandwidth changes go through the provider, and the circuit ends there too.
 *
 * Every operation a retried activity may repeat is idempotent: a circuit is made or accepted under
 * the exchange's request key (asking again answers with the same circuit), connecting a connected
 * handover or disconnecting a disconnected one changes nothing, and so does releasing a released
 * circuit. Every provider passes the same contract tests (`test/contracts/cloud-provider-contract.ts`).
 */

export type CloudCircuitState =
  /** A customer's circuit the exchange has not accepted (yet). */
  | 'pending'
  /** Held by the exchange (made or accepted by it), no handover connected. */
  | 'accepted'
  /** Held by the exchange, at least one handover connected. */
  | 'active'
  /** Deleted at the provider, or handed back to the customer; nothing more can be done with it. */
  | 'released';

/** How a circuit's handovers carry the provider's VLANs, as the offering's `provider_vlans` says. */
export type CloudVlans =
  /** One VLAN at the provider per handover: connections name no VLAN. */
  | 'single'
  /** Several: each connection names the provider VLAN it carries, or none for all the others. */
  | 'multi';

/** One connection of a handover: the exchange's device it comes from, and the provider VLAN. */
export interface HandoverAttachment {
  /** 1 to the circuit's `handovers`. */
  handover: number;
  /** The exchange's device the handover's configuration sits on. */
  device: string;
  /** The provider VLAN (1 to 4094) it carries, or null for all that no other attachment names. */
  vlan: number | null;
}

export interface CloudCircuit {
  /** The provider's reference of the circuit, which the service keeps as its `provider_ref`. */
  ref: string;
  /** The provider, named as the offerings' `service_provider`. */
  provider: string;
  /**
   * `exchange`-made circuits: the customer's account at the provider (the service's `cloud_key`).
   * `customer`-made ones: the key the customer gave the circuit, which the customer orders with.
   */
  key: string;
  /** The provider's region and PoP the circuit is delivered in. */
  region: string;
  pop: string;
  /** What the circuit carries now, in Mbit/s. */
  bandwidth: number;
  /**
   * The most the circuit may carry, in Mbit/s: what the customer bought for a customer's circuit,
   * the provider's largest circuit at the PoP for one the exchange made.
   */
  bandwidthLimit: number;
  /** How many redundant handovers the circuit has; they are numbered from 1. */
  handovers: number;
  vlans: CloudVlans;
  state: CloudCircuitState;
  /** The handovers with at least one attachment, in ascending order. */
  connected: number[];
  /** Every attachment, by handover and then VLAN (null first). */
  attachments: HandoverAttachment[];
  /** Who made the circuit at the provider. */
  origin: 'exchange' | 'customer';
}

/** What the exchange asks for when it makes a circuit for a customer (`exchange_first`). */
export interface CircuitRequest {
  /** The exchange's key for the request: asking again under it answers with the circuit made first. */
  requestKey: string;
  provider: string;
  /** The customer's account at the provider. */
  customerKey: string;
  region: string;
  pop: string;
  /** Mbit/s, at most what the provider allows at the PoP. */
  bandwidth: number;
  handovers: number;
  vlans: CloudVlans;
}

export type CloudProviderErrorCode =
  /** The provider did not answer; try again later. */
  | 'unreachable'
  /** The provider answered too late, maybe after doing the work; try again (under the same key) later. */
  | 'timeout'
  /** The provider knows no circuit by that reference. */
  | 'not-found'
  /** The request breaks the provider's rules (a PoP it lacks, a handover or bandwidth out of range). */
  | 'invalid-request'
  /** Someone else holds what the request wants: another request's circuit, a handover taken. */
  | 'conflict'
  /** The circuit was released; it takes no more requests. */
  | 'released';

const RETRYABLE: ReadonlySet<CloudProviderErrorCode> = new Set(['unreachable', 'timeout']);

/** A provider's refusal or failure; `retryable` says whether trying again can help. */
export class CloudProviderError extends Error {
  readonly retryable: boolean;
  constructor(
    readonly code: CloudProviderErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CloudProviderError';
    this.retryable = RETRYABLE.has(code);
  }
}

export interface CloudProvider {
  readonly kind: string;
  /**
   * Makes a circuit at the provider for a customer (`exchange_first`); the exchange holds it from
   * the start (`accepted`). A request key used before answers with the circuit it made, as it is
   * now, and makes nothing.
   */
  createCircuit(request: CircuitRequest): Promise<CloudCircuit>;
  /**
   * The circuit a customer made at `provider` under `cloudKey` (`provider_first`), in whatever state
   * it is; undefined when the provider has no customer's circuit by that key.
   */
  findCircuit(provider: string, cloudKey: string): Promise<CloudCircuit | undefined>;
  /**
   * Takes a customer's circuit over (`pending` to `accepted`). Accepting again under the same
   * request key answers as before; a circuit another request accepted is a `conflict`.
   */
  acceptCircuit(ref: string, options: { requestKey: string }): Promise<CloudCircuit>;
  /**
   * Connects a handover's VLAN (or, with `vlan` null, the whole handover) to the exchange's `device`;
   * the circuit is `active` from its first attachment. The same attachment again changes nothing;
   * the handover's VLAN attached to another device is a `conflict`.
   */
  connectHandover(
    ref: string,
    handover: number,
    attachment: { device: string; vlan: number | null },
  ): Promise<CloudCircuit>;
  /** Takes an attachment away; one that is not there is left as it is. No attachment left: `accepted`. */
  disconnectHandover(
    ref: string,
    handover: number,
    attachment: { vlan: number | null },
  ): Promise<CloudCircuit>;
  /** Sets what the circuit carries, refused above its `bandwidthLimit`. */
  changeBandwidth(ref: string, bandwidth: number): Promise<CloudCircuit>;
  /**
   * Ends the exchange's hold of a circuit with every attachment: one the exchange made is deleted
   * at the provider, a customer's is handed back. Releasing again changes nothing.
   */
  releaseCircuit(ref: string): Promise<CloudCircuit>;
  /** The circuit as the provider has it now; undefined for a reference it does not know. */
  readCircuit(ref: string): Promise<CloudCircuit | undefined>;
}
