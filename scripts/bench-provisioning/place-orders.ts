import { performance } from 'node:perf_hooks';
import type { Api } from '../bench-orders';

export interface Order {
  tag: string;
  /** performance.now() when the POST went out. */
  startedAt: number;
  postMs: number;
  id?: string;
  problem?: string;
  /** performance.now() when the connection was first seen in production. */
  productionAt?: number;
  /** Epoch milliseconds of the connection's last change when it was first seen in production. */
  productionEpochMs?: number;
  /** A state it stopped in instead (error, operator, …). */
  stuckIn?: string;
}

/** One order over HTTP; never throws: what went wrong is in `problem`. */
export async function placeOrder(api: Api, body: Record<string, unknown>, tag: string): Promise<Order> {
  const startedAt = performance.now();
  const order: Order = { tag, startedAt, postMs: 0 };
  try {
    const response = await fetch(`${api.base}/connections`, {
      method: 'POST',
      headers: { ...api.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    order.postMs = performance.now() - startedAt;
    if (response.status === 201) order.id = (JSON.parse(text) as { id: string }).id;
    else order.problem = `${response.status} ${text.slice(0, 300)}`;
  } catch (error) {
    order.postMs = performance.now() - startedAt;
    order.problem = `no answer: ${error instanceof Error ? error.message : String(error)}`;
  }
  return order;
}

/** Places `count` orders, `concurrency` at a time. */
export async function placeOrders(
  api: Api,
  orderBody: (tag: string) => Record<string, unknown>,
  prefix: string,
  count: number,
  concurrency: number,
): Promise<Order[]> {
  const orders: Order[] = [];
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const index = next;
      next += 1;
      const tag = `${prefix}-${index + 1}`;
      orders[index] = await placeOrder(api, orderBody(tag), tag);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return orders;
}

export function stillProvisioning(orders: readonly Order[]): number {
  return orders.filter((o) => o.id && o.productionAt === undefined && !o.stuckIn).length;
}
