import { context } from '@opentelemetry/api';

interface Waiting<V> {
  promise: Promise<V>;
  resolve: (value: V) => void;
  reject: (error: unknown) => void;
  /** The context of the first request waiting: the read belongs to its trace. */
  context: ReturnType<typeof context.active>;
}

/**
 * A read per key that requests share without ever getting an answer older than themselves. A request
 * that finds no read of its key under way starts one; one that finds a read under way waits for the
 * next, which starts when that one ends and answers every request that came meanwhile. So each
 * answer was read after its request arrived (a change committed before a request is seen by it, on
 * every replica), and a key asked for by many requests at once costs one read per round trip.
 */
export function sharedFreshReads<V>(read: (key: string) => Promise<V>): (key: string) => Promise<V> {
  const underWay = new Map<string, { next?: Waiting<V> }>();

  const start = (key: string): Promise<V> => {
    const entry: { next?: Waiting<V> } = {};
    underWay.set(key, entry);
    const answer = read(key);
    const after = () => {
      const waiting = entry.next;
      if (!waiting) {
        underWay.delete(key);
        return;
      }
      context.with(waiting.context, () => start(key)).then(waiting.resolve, waiting.reject);
    };
    answer.then(after, after);
    return answer;
  };

  return (key) => {
    const entry = underWay.get(key);
    if (!entry) return start(key);
    if (!entry.next) {
      let resolve!: (value: V) => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<V>((ok, fail) => {
        resolve = ok;
        reject = fail;
      });
      entry.next = { promise, resolve, reject, context: context.active() };
    }
    return entry.next.promise;
  };
}
