import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes, UniqueConstraintError } from 'sequelize';
import { newId } from '../../domain/ids';
import type {
  CircuitRequest,
  CloudCircuit,
  CloudCircuitState,
  CloudProvider,
  CloudProviderErrorCode,
  CloudVlans,
  HandoverAttachment,
} from './contract';
import { CloudProviderError } from './contract';

interface CircuitRow {
  ref: string;
  provider: string;
  cloud_key: string;
  region: string;
  pop: string;
  bandwidth: number | string;
  bandwidth_limit: number | string;
  handovers: number | string;
  vlans: string;
  state: string;
  origin: string;
  request_key: string | null;
  attachments: string;
}

/** What a provider offers at one of its PoPs, as the catalogue's cloud offerings say. */
interface Site {
  provider: string;
  region: string;
  pop: string;
  /** The largest circuit the provider makes there, in Mbit/s. */
  bandwidthMax: number;
  /** The most handovers a circuit there may have. */
  handovers: number;
  vlans: CloudVlans;
  /** What the keys of customers' circuits must match, when the offering says. */
  keyPattern: string | null;
}

export type LabCloudOperation =
  | 'createCircuit'
  | 'findCircuit'
  | 'acceptCircuit'
  | 'connectHandover'
  | 'disconnectHandover'
  | 'changeBandwidth'
  | 'releaseCircuit'
  | 'readCircuit';

export interface LabCloudFault {
  /** A provider (as the offerings name it), or every provider when absent. */
  provider?: string;
  operation: LabCloudOperation;
  code: CloudProviderErrorCode;
  message?: string;
  /**
   * The provider does the work and then fails to answer, the way a lost answer looks to the
   * exchange: only asking again under the same key finds what was done.
   */
  afterWork?: boolean;
  /** How many calls it affects (default 1). */
  times?: number;
}

export interface LabCloudOptions {
  /** Delay before every call to a provider (default 0). */
  latencyMs?: number;
}

/** What a customer orders at a provider themselves, before handing the circuit's key to the exchange. */
export interface CustomerCircuitOrder {
  provider: string;
  pop: string;
  /** Mbit/s; the exchange may use the circuit up to it. */
  bandwidth: number;
  /** The PoP's region; checked when given. */
  region?: string;
  /** The circuit's key; one is made up when absent. */
  key?: string;
  /** Whose circuit it is, for the lab's own records (the customer's account at the exchange, say). */
  customer?: string;
}

const MAX_KEY = 200;
const MAX_DEVICE = 80;
const ACCOUNT_KEY = /^[A-Za-z0-9][A-Za-z0-9._:@-]*$/;
const KEY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

const refuse = (code: CloudProviderErrorCode, message: string): never => {
  throw new CloudProviderError(code, message);
};

const isCount = (value: unknown, max: number): value is number =>
  Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= max;

/** The lab's providers name the keys of customers' circuits after the first word of their name. */
function providerKeyOf(provider: string): string {
  return (provider.trim().split(/\s+/)[0] ?? '').toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** How the keys of a provider's customers' circuits look: `stratus-k3j9x0aa` for Stratus Compute. */
const customerKeyPattern = (provider: string) => new RegExp(`^${providerKeyOf(provider)}-[a-z0-9]{8}$`);

const byAttachment = (x: HandoverAttachment, y: HandoverAttachment) =>
  x.handover - y.handover || (x.vlan ?? 0) - (y.vlan ?? 0);

function toCircuit(row: CircuitRow): CloudCircuit {
  const attachments = (JSON.parse(row.attachments) as HandoverAttachment[]).sort(byAttachment);
  return {
    ref: row.ref,
    provider: row.provider,
    key: row.cloud_key,
    region: row.region,
    pop: row.pop,
    bandwidth: Number(row.bandwidth),
    bandwidthLimit: Number(row.bandwidth_limit),
    handovers: Number(row.handovers),
    vlans: row.vlans as CloudVlans,
    state: row.state as CloudCircuitState,
    connected: [...new Set(attachments.map((a) => a.handover))],
    attachments,
    origin: row.origin as CloudCircuit['origin'],
  };
}

/**
 * The lab's cloud providers: circuits kept in the database (`lab_cloud_circuits`) at the providers,
 * regions and PoPs of the catalogue's cloud offerings, so that everything above the contract runs
 * for real. Providers answer after a configurable latency and fail where a fault was injected
 * (`injectFault`), before the work or, like a lost answer, after it.
 */
export class LabCloudProvider implements CloudProvider {
  readonly kind = 'lab';

  constructor(
    private readonly sequelize: Sequelize,
    private readonly options: LabCloudOptions = {},
  ) {}

  private select<T extends object>(
    sql: string,
    replacements: Record<string, unknown>,
    transaction?: Transaction,
  ) {
    return this.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT, transaction });
  }

  private async run(sql: string, replacements: Record<string, unknown>, transaction?: Transaction) {
    await this.sequelize.query(sql, { replacements, transaction });
  }

  /** Consumes one injected fault for this call, if one applies, and throws it. */
  private async failIfFaulty(
    provider: string | undefined,
    operation: LabCloudOperation,
    afterWork: boolean,
  ): Promise<void> {
    const fault = await this.sequelize.transaction(async (transaction) => {
      const [found] = await this.select<{ id: number; code: CloudProviderErrorCode; message: string }>(
        `SELECT id, code, message FROM lab_cloud_faults
         WHERE operation = :operation AND after_work = :afterWork AND remaining > 0
           AND (provider IS NULL OR provider = :provider)
         ORDER BY id LIMIT 1 FOR UPDATE`,
        { operation, afterWork, provider: provider ?? null },
        transaction,
      );
      if (found)
        await this.run(
          'UPDATE lab_cloud_faults SET remaining = remaining - 1 WHERE id = :id',
          found,
          transaction,
        );
      return found;
    });
    if (fault) refuse(fault.code, `${provider ?? 'the provider'}: ${fault.message}`);
  }

  /** Calls a provider: its latency, a fault before the work, the work, a fault after it. */
  private async call<T>(
    provider: string | undefined,
    operation: LabCloudOperation,
    work: () => Promise<T>,
  ): Promise<T> {
    const latency = this.options.latencyMs ?? 0;
    if (latency > 0) await sleep(latency);
    await this.failIfFaulty(provider, operation, false);
    const result = await work();
    await this.failIfFaulty(provider, operation, true);
    return result;
  }

  /** The provider a reference belongs to, for faults aimed at one provider. */
  private async providerOf(ref: string): Promise<string | undefined> {
    const [row] = await this.select<{ provider: string }>(
      'SELECT provider FROM lab_cloud_circuits WHERE ref = :ref',
      {
        ref,
      },
    );
    return row?.provider;
  }

  private async rowByRequest(requestKey: string, transaction?: Transaction): Promise<CircuitRow | undefined> {
    const [row] = await this.select<CircuitRow>(
      'SELECT * FROM lab_cloud_circuits WHERE request_key = :requestKey',
      { requestKey },
      transaction,
    );
    return row;
  }

  /**
   * Runs `change` on a locked circuit the exchange holds and stores what it returns (nothing: no
   * change). Unknown and not accepted circuits are refused, and released ones unless
   * `releasedAsIs` lets them answer as they are.
   */
  private async change(
    ref: string,
    what: string,
    change: (circuit: CloudCircuit) => Pick<CloudCircuit, 'state' | 'bandwidth' | 'attachments'> | undefined,
    releasedAsIs = false,
  ): Promise<CloudCircuit> {
    return this.sequelize.transaction(async (transaction) => {
      const [row] = await this.select<CircuitRow>(
        'SELECT * FROM lab_cloud_circuits WHERE ref = :ref FOR UPDATE',
        { ref },
        transaction,
      );
      if (!row) return refuse('not-found', `no circuit ${ref}`);
      const circuit = toCircuit(row);
      if (circuit.state === 'released' && releasedAsIs) return circuit;
      if (circuit.state === 'released') refuse('released', `circuit ${ref} was released; it cannot ${what}`);
      if (circuit.state === 'pending')
        refuse('conflict', `circuit ${ref} was not accepted by the exchange; it cannot ${what}`);
      const next = change(circuit);
      if (!next) return circuit;
      const attachments = [...next.attachments].sort(byAttachment);
      await this.run(
        `UPDATE lab_cloud_circuits SET state = :state, bandwidth = :bandwidth, attachments = :attachments,
           updated_at = NOW(3) WHERE ref = :ref`,
        { ref, state: next.state, bandwidth: next.bandwidth, attachments: JSON.stringify(attachments) },
        transaction,
      );
      return toCircuit({
        ...row,
        state: next.state,
        bandwidth: next.bandwidth,
        attachments: JSON.stringify(attachments),
      });
    });
  }

  /** Checks a handover and a VLAN against the circuit they are asked of. */
  private static checkHandover(circuit: CloudCircuit, handover: number, vlan: number | null): void {
    if (!isCount(handover, circuit.handovers))
      refuse(
        'invalid-request',
        `circuit ${circuit.ref} has handovers 1 to ${circuit.handovers}, not ${String(handover)}`,
      );
    if (circuit.vlans === 'single' && vlan !== null)
      refuse(
        'invalid-request',
        `circuit ${circuit.ref} carries a single VLAN per handover; it takes no VLAN ${vlan}`,
      );
    if (vlan !== null && !isCount(vlan, 4094))
      refuse('invalid-request', `circuit ${circuit.ref}: VLAN ${String(vlan)} is not a VLAN from 1 to 4094`);
  }

  async createCircuit(request: CircuitRequest): Promise<CloudCircuit> {
    return this.call(request.provider, 'createCircuit', async () => {
      const made = await this.rowByRequest(request.requestKey);
      if (made) return answerFor(made, request.requestKey);
      const { requestKey, customerKey, bandwidth, handovers, vlans } = request;
      if (typeof requestKey !== 'string' || !requestKey || requestKey.length > MAX_KEY)
        refuse(
          'invalid-request',
          `request key ${JSON.stringify(requestKey)} is not 1 to ${MAX_KEY} characters`,
        );
      const site = await siteOf(this.sequelize, request);
      if (typeof customerKey !== 'string' || customerKey.length > MAX_KEY || !ACCOUNT_KEY.test(customerKey))
        refuse('invalid-request', `${site.provider} has no account ${JSON.stringify(customerKey)}`);
      checkBandwidth(site, bandwidth);
      if (!isCount(handovers, site.handovers))
        refuse(
          'invalid-request',
          `${site.provider} makes circuits of 1 to ${site.handovers} handovers at ${site.pop}, not ${String(handovers)}`,
        );
      if (vlans !== site.vlans)
        refuse(
          'invalid-request',
          `${site.provider} hands over ${site.vlans} VLANs at ${site.pop}, not ${String(vlans)}`,
        );
      const ref = newId('cc');
      try {
        await this.run(
          `INSERT INTO lab_cloud_circuits (ref, provider, cloud_key, service_key, region, pop, bandwidth,
             bandwidth_limit, handovers, vlans, state, origin, customer, request_key, attachments, created_at, updated_at)
           VALUES (:ref, :provider, :customerKey, NULL, :region, :pop, :bandwidth, :bandwidthMax, :handovers,
             :vlans, 'accepted', 'exchange', NULL, :requestKey, '[]', NOW(3), NOW(3))`,
          { ref, ...site, customerKey, bandwidth, handovers, requestKey },
        );
      } catch (error) {
        // The same request, made twice at once: the one that got in first made the circuit.
        const first =
          error instanceof UniqueConstraintError ? await this.rowByRequest(requestKey) : undefined;
        if (!first) throw error;
        return answerFor(first, requestKey);
      }
      return (await this.readRow(ref))!;
    });
  }

  private async readRow(ref: string): Promise<CloudCircuit | undefined> {
    const [row] = await this.select<CircuitRow>('SELECT * FROM lab_cloud_circuits WHERE ref = :ref', { ref });
    return row ? toCircuit(row) : undefined;
  }

  async findCircuit(provider: string, cloudKey: string): Promise<CloudCircuit | undefined> {
    return this.call(provider, 'findCircuit', async () => {
      const [row] = await this.select<CircuitRow>(
        `SELECT * FROM lab_cloud_circuits WHERE provider = :provider AND service_key = :cloudKey`,
        { provider, cloudKey },
      );
      return row ? toCircuit(row) : undefined;
    });
  }

  async acceptCircuit(ref: string, { requestKey }: { requestKey: string }): Promise<CloudCircuit> {
    return this.call(await this.providerOf(ref), 'acceptCircuit', () =>
      this.sequelize.transaction(async (transaction) => {
        const [row] = await this.select<CircuitRow>(
          'SELECT * FROM lab_cloud_circuits WHERE ref = :ref FOR UPDATE',
          { ref },
          transaction,
        );
        if (!row) return refuse('not-found', `no circuit ${ref}`);
        if (row.request_key === requestKey) return toCircuit(row);
        if (row.state === 'released')
          refuse('released', `circuit ${ref} was released; it cannot be accepted`);
        if (row.request_key !== null)
          refuse('conflict', `circuit ${ref} is held by another request of the exchange`);
        if (typeof requestKey !== 'string' || !requestKey || requestKey.length > MAX_KEY)
          refuse(
            'invalid-request',
            `request key ${JSON.stringify(requestKey)} is not 1 to ${MAX_KEY} characters`,
          );
        const other = await this.rowByRequest(requestKey, transaction);
        if (other) refuse('conflict', `request ${requestKey} holds circuit ${other.ref} already`);
        await this.run(
          `UPDATE lab_cloud_circuits SET state = 'accepted', request_key = :requestKey, updated_at = NOW(3)
           WHERE ref = :ref`,
          { ref, requestKey },
          transaction,
        );
        return toCircuit({ ...row, state: 'accepted', request_key: requestKey });
      }),
    );
  }

  async connectHandover(
    ref: string,
    handover: number,
    { device, vlan }: { device: string; vlan: number | null },
  ): Promise<CloudCircuit> {
    return this.call(await this.providerOf(ref), 'connectHandover', () =>
      this.change(ref, 'connect a handover', (circuit) => {
        LabCloudProvider.checkHandover(circuit, handover, vlan);
        if (typeof device !== 'string' || !device || device.length > MAX_DEVICE)
          refuse('invalid-request', `device ${JSON.stringify(device)} is not 1 to ${MAX_DEVICE} characters`);
        const held = circuit.attachments.find((a) => a.handover === handover && a.vlan === vlan);
        const where = `handover ${handover}${vlan === null ? '' : ` VLAN ${vlan}`} of circuit ${ref}`;
        if (held?.device === device) return undefined;
        if (held) refuse('conflict', `${where} is connected to ${held.device}, not ${device}`);
        return {
          ...circuit,
          state: 'active',
          attachments: [...circuit.attachments, { handover, device, vlan }],
        };
      }),
    );
  }

  async disconnectHandover(
    ref: string,
    handover: number,
    { vlan }: { vlan: number | null },
  ): Promise<CloudCircuit> {
    return this.call(await this.providerOf(ref), 'disconnectHandover', () =>
      this.change(ref, 'disconnect a handover', (circuit) => {
        LabCloudProvider.checkHandover(circuit, handover, vlan);
        const attachments = circuit.attachments.filter((a) => !(a.handover === handover && a.vlan === vlan));
        if (attachments.length === circuit.attachments.length) return undefined;
        return { ...circuit, state: attachments.length ? 'active' : 'accepted', attachments };
      }),
    );
  }

  async changeBandwidth(ref: string, bandwidth: number): Promise<CloudCircuit> {
    return this.call(await this.providerOf(ref), 'changeBandwidth', () =>
      this.change(ref, 'change its bandwidth', (circuit) => {
        if (!isCount(bandwidth, circuit.bandwidthLimit))
          refuse(
            'invalid-request',
            `circuit ${ref} carries 1 to ${circuit.bandwidthLimit} Mbit/s, not ${String(bandwidth)}`,
          );
        return bandwidth === circuit.bandwidth ? undefined : { ...circuit, bandwidth };
      }),
    );
  }

  async releaseCircuit(ref: string): Promise<CloudCircuit> {
    return this.call(await this.providerOf(ref), 'releaseCircuit', () =>
      this.change(ref, 'be released', (held) => ({ ...held, state: 'released', attachments: [] }), true),
    );
  }

  async readCircuit(ref: string): Promise<CloudCircuit | undefined> {
    return this.call(await this.providerOf(ref), 'readCircuit', () => this.readRow(ref));
  }

  async injectFault(fault: LabCloudFault): Promise<void> {
    await this.run(
      `INSERT INTO lab_cloud_faults (provider, operation, code, message, after_work, remaining)
       VALUES (:provider, :operation, :code, :message, :afterWork, :times)`,
      {
        provider: fault.provider ?? null,
        operation: fault.operation,
        code: fault.code,
        message: fault.message ?? `injected ${fault.code} on ${fault.operation}`,
        afterWork: fault.afterWork ?? false,
        times: fault.times ?? 1,
      },
    );
  }

  async clearFaults(): Promise<void> {
    await this.run('DELETE FROM lab_cloud_faults', {});
  }
}

/** The circuit a request key made, or a conflict when the key accepted a customer's circuit instead. */
function answerFor(row: CircuitRow, requestKey: string): CloudCircuit {
  if (row.origin !== 'exchange')
    refuse('conflict', `request ${requestKey} accepted the customer's circuit ${row.ref}; it made none`);
  return toCircuit(row);
}

function checkBandwidth(site: Site, bandwidth: unknown): void {
  if (!isCount(bandwidth, site.bandwidthMax))
    refuse(
      'invalid-request',
      `${site.provider} makes circuits of 1 to ${site.bandwidthMax} Mbit/s at ${site.pop}, not ${String(bandwidth)}`,
    );
}

/** The PoP of a provider a request names, refused when the provider lacks it or it is in another region. */
async function siteOf(
  sequelize: Sequelize,
  request: { provider: string; pop: string; region?: string },
): Promise<Site> {
  const offerings = await sequelize.query<{
    provider: string;
    region: string;
    pop: string;
    bandwidth_max: number | string | null;
    diversity: number | string | null;
    vlans: string | null;
    key_pattern: string | null;
  }>(
    `SELECT service_provider AS provider, service_provider_region AS region, service_provider_pop AS pop,
       bandwidth_max, diversity, provider_vlans AS vlans, cloud_key_pattern AS key_pattern
     FROM product_offerings WHERE type = 'cloud_vc' AND service_provider = :provider ORDER BY id`,
    { replacements: { provider: request.provider }, type: QueryTypes.SELECT },
  );
  if (!offerings.length)
    return refuse('invalid-request', `the lab has no cloud provider ${JSON.stringify(request.provider)}`);
  const offering = offerings.find((o) => o.pop === request.pop);
  if (!offering)
    return refuse('invalid-request', `${request.provider} has no PoP ${JSON.stringify(request.pop)}`);
  if (request.region !== undefined && request.region !== offering.region)
    refuse(
      'invalid-request',
      `PoP ${offering.pop} of ${offering.provider} is in region ${offering.region}, not ${JSON.stringify(request.region)}`,
    );
  return {
    provider: offering.provider,
    region: offering.region,
    pop: offering.pop,
    // Where an offering names no maximum, the lab's providers make circuits of up to 10 Gbit/s.
    bandwidthMax: Number(offering.bandwidth_max ?? 10_000),
    handovers: Number(offering.diversity ?? 1),
    vlans: offering.vlans === 'multi' ? 'multi' : 'single',
    keyPattern: offering.key_pattern,
  };
}

function newCustomerKey(provider: string): string {
  let suffix = '';
  for (let i = 0; i < 8; i += 1) suffix += KEY_ALPHABET[randomInt(KEY_ALPHABET.length)];
  return `${providerKeyOf(provider)}-${suffix}`;
}

/**
 * Makes a circuit at a lab provider the way a customer does at a `provider_first` provider, and
 * answers it (`pending`, to be accepted by the exchange). Its key is the one given or a new one
 * like `stratus-k3j9x0aa`; either way it matches the provider's keys and the offering's pattern.
 */
export async function createCustomerCircuit(
  sequelize: Sequelize,
  order: CustomerCircuitOrder,
): Promise<CloudCircuit> {
  const site = await siteOf(sequelize, order);
  checkBandwidth(site, order.bandwidth);
  const pattern = customerKeyPattern(site.provider);
  const fits = (key: string) =>
    pattern.test(key) && (site.keyPattern === null || new RegExp(site.keyPattern).test(key));
  if (order.key !== undefined && !fits(order.key))
    refuse(
      'invalid-request',
      `${JSON.stringify(order.key)} is not a key of ${site.provider}, which look like ${newCustomerKey(site.provider)}`,
    );
  for (let attempt = 0; ; attempt += 1) {
    const key = order.key ?? newCustomerKey(site.provider);
    const ref = newId('cc');
    try {
      await sequelize.query(
        `INSERT INTO lab_cloud_circuits (ref, provider, cloud_key, service_key, region, pop, bandwidth,
           bandwidth_limit, handovers, vlans, state, origin, customer, request_key, attachments, created_at, updated_at)
         VALUES (:ref, :provider, :key, :key, :region, :pop, :bandwidth, :bandwidth, :handovers, :vlans,
           'pending', 'customer', :customer, NULL, '[]', NOW(3), NOW(3))`,
        {
          replacements: {
            ref,
            key,
            ...site,
            bandwidth: order.bandwidth,
            customer: order.customer ?? null,
          },
        },
      );
      const [row] = await sequelize.query<CircuitRow>('SELECT * FROM lab_cloud_circuits WHERE ref = :ref', {
        replacements: { ref },
        type: QueryTypes.SELECT,
      });
      return toCircuit(row);
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error;
      if (order.key !== undefined) refuse('conflict', `${site.provider} has a circuit ${order.key} already`);
      // A made-up key that is taken: make up another.
      if (attempt >= 5) throw error;
    }
  }
}
