import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { CircuitRequest, CloudCircuit, CloudProvider } from '../../drivers/cloud/contract';
import { CloudProviderError } from '../../drivers/cloud/contract';

/** What the contract tests need of a cloud provider under test. */
export interface CloudProviderUnderTest {
  cloud: CloudProvider;
  /**
   * Where the exchange may make circuits for a customer (`exchange_first`): a PoP whose circuits
   * have at least two handovers and carry several VLANs, the customer's account there, and the
   * largest circuit the provider makes at the PoP.
   */
  exchangeFirst: {
    provider: string;
    region: string;
    pop: string;
    customerKey: string;
    bandwidthLimit: number;
    handovers: number;
  };
  /** A `provider_first` provider's PoP, whose circuits carry a single VLAN per handover. */
  providerFirst: { provider: string; region: string; pop: string };
  /** Makes a circuit there as a customer would, of `bandwidth` Mbit/s; answers its key. */
  customerCircuit(bandwidth: number): Promise<string>;
  /** Two of the exchange's devices to connect handovers to. */
  devices: [string, string];
}

const key = () => `contract-${randomBytes(6).toString('hex')}`;

async function expectCloudError(
  action: Promise<unknown>,
  code: CloudProviderError['code'],
): Promise<CloudProviderError> {
  try {
    await action;
  } catch (error) {
    assert.ok(error instanceof CloudProviderError, `expected a CloudProviderError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected a ${code} CloudProviderError`);
}

/**
 * The behaviour every cloud provider must show. Run it for a provider with
 * `describeCloudProviderContract('name', setup)` inside a mocha file.
 */
export function describeCloudProviderContract(
  name: string,
  setup: () => Promise<CloudProviderUnderTest>,
): void {
  describe(`cloud provider contract: ${name}`, () => {
    let subject: CloudProviderUnderTest;
    let cloud: CloudProvider;
    let first: string, second: string;

    before(async () => {
      subject = await setup();
      cloud = subject.cloud;
      [first, second] = subject.devices;
      assert.ok(subject.exchangeFirst.handovers >= 2, 'the contract tests need circuits of two handovers');
    });

    const request = (extra: Partial<CircuitRequest> = {}): CircuitRequest => {
      const { provider, region, pop, customerKey } = subject.exchangeFirst;
      return {
        requestKey: key(),
        provider,
        customerKey,
        region,
        pop,
        bandwidth: 1000,
        handovers: 2,
        vlans: 'multi',
        ...extra,
      };
    };
    /** A customer's circuit at the provider_first provider, as the provider has it. */
    const customers = async (bandwidth = 500): Promise<CloudCircuit> => {
      const circuitKey = await subject.customerCircuit(bandwidth);
      const circuit = await cloud.findCircuit(subject.providerFirst.provider, circuitKey);
      assert.ok(circuit, `the customer's circuit ${circuitKey} is found`);
      return circuit;
    };

    it('makes a circuit for a customer, held by the exchange from the start, once per request key', async () => {
      const asked = request();
      const made = await cloud.createCircuit(asked);
      assert.deepEqual(
        { ...made, ref: typeof made.ref },
        {
          ref: 'string',
          provider: asked.provider,
          key: asked.customerKey,
          region: asked.region,
          pop: asked.pop,
          bandwidth: 1000,
          bandwidthLimit: subject.exchangeFirst.bandwidthLimit,
          handovers: 2,
          vlans: 'multi',
          state: 'accepted',
          connected: [],
          attachments: [],
          origin: 'exchange',
        },
      );
      assert.deepEqual(await cloud.createCircuit(asked), made, 'a retried request answers the same');
      assert.deepEqual(
        await cloud.createCircuit({ ...asked, bandwidth: 2000 }),
        made,
        'a request key answers with the circuit it made first, whatever is asked under it again',
      );
      assert.deepEqual(await cloud.readCircuit(made.ref), made);
      const other = await cloud.createCircuit(request());
      assert.notEqual(other.ref, made.ref, 'another request key makes another circuit');
    });

    it('refuses circuits it cannot make, and a refused request key stays free', async () => {
      const { bandwidthLimit } = subject.exchangeFirst;
      const requestKey = key();
      const refusals: Array<Partial<CircuitRequest>> = [
        { pop: 'no-such-pop' },
        { region: 'no-such-region' },
        { provider: 'No Such Provider' },
        { bandwidth: 0 },
        { bandwidth: bandwidthLimit + 1 },
        { handovers: 0 },
        { vlans: 'single' },
      ];
      for (const change of refusals) {
        const error = await expectCloudError(
          cloud.createCircuit(request({ requestKey, ...change })),
          'invalid-request',
        );
        assert.equal(error.retryable, false);
      }
      const made = await cloud.createCircuit(request({ requestKey, bandwidth: bandwidthLimit }));
      assert.equal(made.bandwidth, bandwidthLimit);
    });

    it("connects a circuit's handovers VLAN by VLAN to the exchange's devices, each once, and disconnects them", async () => {
      const { ref } = await cloud.createCircuit(request());
      const tagged = await cloud.connectHandover(ref, 1, { device: first, vlan: 100 });
      assert.equal(tagged.state, 'active');
      assert.deepEqual(tagged.connected, [1]);
      assert.deepEqual(tagged.attachments, [{ handover: 1, device: first, vlan: 100 }]);
      assert.deepEqual(
        await cloud.connectHandover(ref, 1, { device: first, vlan: 100 }),
        tagged,
        'connecting again',
      );
      await cloud.connectHandover(ref, 2, { device: second, vlan: 100 });
      const all = await cloud.connectHandover(ref, 1, { device: first, vlan: null });
      assert.deepEqual(all.connected, [1, 2]);
      assert.deepEqual(all.attachments, [
        { handover: 1, device: first, vlan: null },
        { handover: 1, device: first, vlan: 100 },
        { handover: 2, device: second, vlan: 100 },
      ]);

      const taken = await expectCloudError(
        cloud.connectHandover(ref, 1, { device: second, vlan: 100 }),
        'conflict',
      );
      assert.equal(taken.retryable, false);
      const invalid: Array<[number, number | null]> = [
        [0, 100],
        [subject.exchangeFirst.handovers + 1, 100],
        [3, null],
        [1, 0],
        [1, 4095],
      ];
      for (const [handover, vlan] of invalid)
        await expectCloudError(
          cloud.connectHandover(ref, handover, { device: first, vlan }),
          'invalid-request',
        );
      assert.deepEqual(await cloud.readCircuit(ref), all, 'refusals changed the circuit');

      const fewer = await cloud.disconnectHandover(ref, 1, { vlan: 100 });
      assert.deepEqual(fewer.attachments, [
        { handover: 1, device: first, vlan: null },
        { handover: 2, device: second, vlan: 100 },
      ]);
      assert.equal(fewer.state, 'active');
      assert.deepEqual(await cloud.disconnectHandover(ref, 1, { vlan: 100 }), fewer, 'disconnecting again');
      await cloud.disconnectHandover(ref, 1, { vlan: null });
      const none = await cloud.disconnectHandover(ref, 2, { vlan: 100 });
      assert.deepEqual(
        { state: none.state, connected: none.connected, attachments: none.attachments },
        { state: 'accepted', connected: [], attachments: [] },
      );
    });

    it("changes a circuit's bandwidth up to its limit, and no further", async () => {
      const { ref, bandwidthLimit } = await cloud.createCircuit(request());
      assert.equal((await cloud.changeBandwidth(ref, 100)).bandwidth, 100);
      assert.equal((await cloud.changeBandwidth(ref, bandwidthLimit)).bandwidth, bandwidthLimit);
      for (const bandwidth of [bandwidthLimit + 1, 0, -100, 1.5]) {
        const error = await expectCloudError(cloud.changeBandwidth(ref, bandwidth), 'invalid-request');
        assert.equal(error.retryable, false);
      }
      assert.equal((await cloud.readCircuit(ref))?.bandwidth, bandwidthLimit);
    });

    it("finds a customer's circuit by its key, at its own provider only", async () => {
      const circuitKey = await subject.customerCircuit(500);
      const found = await cloud.findCircuit(subject.providerFirst.provider, circuitKey);
      assert.ok(found);
      assert.deepEqual(
        { ...found, ref: typeof found.ref },
        {
          ref: 'string',
          provider: subject.providerFirst.provider,
          key: circuitKey,
          region: subject.providerFirst.region,
          pop: subject.providerFirst.pop,
          bandwidth: 500,
          bandwidthLimit: 500,
          handovers: found.handovers,
          vlans: 'single',
          state: 'pending',
          connected: [],
          attachments: [],
          origin: 'customer',
        },
      );
      assert.ok(found.handovers >= 1);
      assert.deepEqual(await cloud.readCircuit(found.ref), found);
      assert.equal(await cloud.findCircuit(subject.providerFirst.provider, `${circuitKey}x`), undefined);
      assert.equal(
        await cloud.findCircuit(subject.providerFirst.provider, circuitKey.toUpperCase()),
        undefined,
      );
      assert.equal(await cloud.findCircuit(subject.exchangeFirst.provider, circuitKey), undefined);
      const made = await cloud.createCircuit(request());
      assert.equal(
        await cloud.findCircuit(made.provider, made.key),
        undefined,
        "a circuit the exchange made is no customer's circuit",
      );
    });

    it("lets the exchange accept a customer's circuit under one request key, and then use it", async () => {
      const { ref } = await customers(500);
      // Nothing but accepting can be done with a circuit the exchange does not hold.
      await expectCloudError(cloud.connectHandover(ref, 1, { device: first, vlan: null }), 'conflict');
      await expectCloudError(cloud.changeBandwidth(ref, 100), 'conflict');
      await expectCloudError(cloud.releaseCircuit(ref), 'conflict');

      const requestKey = key();
      const accepted = await cloud.acceptCircuit(ref, { requestKey });
      assert.equal(accepted.state, 'accepted');
      assert.deepEqual(await cloud.acceptCircuit(ref, { requestKey }), accepted, 'accepting again');
      const error = await expectCloudError(cloud.acceptCircuit(ref, { requestKey: key() }), 'conflict');
      assert.equal(error.retryable, false);
      await expectCloudError(cloud.createCircuit(request({ requestKey })), 'conflict');
      assert.deepEqual(await cloud.findCircuit(accepted.provider, accepted.key), accepted);

      await expectCloudError(cloud.connectHandover(ref, 1, { device: first, vlan: 100 }), 'invalid-request');
      const connected = await cloud.connectHandover(ref, 1, { device: first, vlan: null });
      assert.deepEqual(
        { state: connected.state, attachments: connected.attachments },
        { state: 'active', attachments: [{ handover: 1, device: first, vlan: null }] },
      );
      await expectCloudError(cloud.changeBandwidth(ref, 501), 'invalid-request');
      assert.equal((await cloud.changeBandwidth(ref, 200)).bandwidth, 200);
      assert.equal(
        (await cloud.changeBandwidth(ref, 500)).bandwidth,
        500,
        'back up to what the customer bought',
      );
    });

    it('lets one of two requests accept a circuit, and refuses the other', async () => {
      const { ref } = await customers();
      const keys = [key(), key()];
      const results = await Promise.allSettled(
        keys.map((requestKey) => cloud.acceptCircuit(ref, { requestKey })),
      );
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      const refused = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
      assert.ok(refused.reason instanceof CloudProviderError && refused.reason.code === 'conflict');
      const winner = keys[results.findIndex((r) => r.status === 'fulfilled')];
      assert.equal((await cloud.acceptCircuit(ref, { requestKey: winner })).state, 'accepted');
    });

    it('releases a circuit it made once, with its handovers, and takes nothing more for it', async () => {
      const asked = request();
      const { ref } = await cloud.createCircuit(asked);
      await cloud.connectHandover(ref, 1, { device: first, vlan: null });
      const released = await cloud.releaseCircuit(ref);
      assert.deepEqual(
        { state: released.state, connected: released.connected, attachments: released.attachments },
        { state: 'released', connected: [], attachments: [] },
      );
      assert.deepEqual(await cloud.releaseCircuit(ref), released, 'releasing again');
      assert.deepEqual(await cloud.readCircuit(ref), released);
      assert.deepEqual(
        await cloud.createCircuit(asked),
        released,
        'its request key made it; it makes no other',
      );
      const refusals = [
        () => cloud.connectHandover(ref, 1, { device: first, vlan: null }),
        () => cloud.disconnectHandover(ref, 1, { vlan: null }),
        () => cloud.changeBandwidth(ref, 100),
        () => cloud.acceptCircuit(ref, { requestKey: key() }),
      ];
      for (const refusal of refusals) {
        const error = await expectCloudError(refusal(), 'released');
        assert.equal(error.retryable, false);
      }
    });

    it("hands a customer's circuit back on release, which the customer's key still finds", async () => {
      const { ref } = await customers();
      await cloud.acceptCircuit(ref, { requestKey: key() });
      await cloud.connectHandover(ref, 1, { device: second, vlan: null });
      const released = await cloud.releaseCircuit(ref);
      assert.deepEqual(
        { state: released.state, attachments: released.attachments, origin: released.origin },
        { state: 'released', attachments: [], origin: 'customer' },
      );
      assert.deepEqual(await cloud.findCircuit(released.provider, released.key), released);
      await expectCloudError(cloud.acceptCircuit(ref, { requestKey: key() }), 'released');
    });

    it('knows no circuit by a reference it never gave', async () => {
      const ref = `contract-unknown-${randomBytes(4).toString('hex')}`;
      assert.equal(await cloud.readCircuit(ref), undefined);
      const refusals = [
        () => cloud.acceptCircuit(ref, { requestKey: key() }),
        () => cloud.connectHandover(ref, 1, { device: first, vlan: null }),
        () => cloud.disconnectHandover(ref, 1, { vlan: null }),
        () => cloud.changeBandwidth(ref, 100),
        () => cloud.releaseCircuit(ref),
      ];
      for (const refusal of refusals) {
        const error = await expectCloudError(refusal(), 'not-found');
        assert.equal(error.retryable, false);
      }
    });
  });
}
