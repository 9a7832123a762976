/** What the benchmarks share to order connections over HTTP as the demo's customer. */

const say = (message: string) => process.stdout.write(`[bench] ${message}\n`);

/** The benchmark cannot run (as opposed to figures that fall short); reported without a stack. */
export class BenchError extends Error {}

export interface Api {
  base: string;
  headers: Record<string, string>;
}

export async function getJson<T>(api: Api, pathAndQuery: string): Promise<T> {
  const response = await fetch(`${api.base}${pathAndQuery}`, { headers: api.headers });
  const text = await response.text();
  if (response.status !== 200)
    throw new BenchError(`GET ${pathAndQuery} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** Logs in as the demo's first customer and works out an order its offering accepts. */
export async function prepareOrders(
  base: string,
  credential: { apiKey: string; apiSecret: string; accountId: string },
  offeringId: string,
): Promise<{ api: Api; orderBody: (tag: string) => Record<string, unknown> }> {
  const tokenResponse = await fetch(`${base}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: credential.apiKey, api_secret: credential.apiSecret }),
  });
  if (!tokenResponse.ok)
    throw new BenchError(`POST /auth/token answered ${tokenResponse.status}: ${await tokenResponse.text()}`);
  const { access_token } = (await tokenResponse.json()) as { access_token: string };
  const api: Api = { base, headers: { authorization: `Bearer ${access_token}` } };

  const offering = await getJson<{
    required_contact_roles?: string[];
    cross_connect_initiator?: string | null;
  }>(api, `/product-offerings/${encodeURIComponent(offeringId)}`);
  if (offering.cross_connect_initiator === 'subscriber')
    throw new BenchError(
      `BENCH_OFFERING: ${offeringId} waits for the subscriber's cross-connect, so no order reaches production by itself; choose one whose cross-connect the exchange orders`,
    );
  const account = credential.accountId;
  const contacts = await getJson<Array<{ id: string }>>(
    api,
    `/contacts?consuming_account=${encodeURIComponent(account)}`,
  );
  const ours = new Set(contacts.map((c) => c.id));
  const assignments = (
    await getJson<Array<{ id: string; role: string; contact: string }>>(api, '/role-assignments')
  ).filter((a) => ours.has(a.contact));
  const roleAssignments: string[] = [];
  for (const role of offering.required_contact_roles ?? []) {
    const assignment = assignments.find((a) => a.role === role);
    if (!assignment) throw new BenchError(`${account} has no contact in the role ${role} the offering needs`);
    roleAssignments.push(assignment.id);
  }
  const billing = await getJson<{ billing_information?: unknown }>(
    api,
    `/accounts/${encodeURIComponent(account)}`,
  );
  if (!billing.billing_information) throw new BenchError(`${account} has no billing information`);
  const demarcs = offering.cross_connect_initiator === 'exchange';
  say(
    `ordering as ${account}: ${offeringId}, role assignments ${roleAssignments.join(', ') || 'none'}${demarcs ? ', with a subscriber-side demarc' : ''}`,
  );
  return {
    api,
    orderBody: (tag) => ({
      managing_account: account,
      consuming_account: account,
      billing_account: account,
      role_assignments: roleAssignments,
      product_offering: offeringId,
      mode: 'standalone',
      port_quantity: 1,
      subscriber_side_demarcs: demarcs ? [`bench cage 1, panel ${tag}`] : [],
      external_ref: `bench-${tag}`,
    }),
  };
}
