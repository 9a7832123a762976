import type { NativeConnection } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../activities';

/** A worker for the provisioning task queue, running the workflows of workflows/ and the given activities. */
export async function createWorker(options: {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: Activities;
}): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowsPath: require.resolve('../workflows'),
    activities: options.activities,
  });
}
