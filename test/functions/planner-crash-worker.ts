/**
 * A plan worker that misbehaves on request, for the worker planner's crash tests: the real plan
 * worker, behind a listener that sees each request first and, for some object names, exits,
 * throws instead of answering (with a "secret" in the message) or exhausts its heap.
 */
import { parentPort } from 'node:worker_threads';

const port = parentPort!;
const post = port.postMessage.bind(port);
let doomed: number | undefined;
// Listeners of a port are called independently: the real one still plans, so "throw" fails its
// answer instead (an uncaught error in the worker, as a bug would raise).
port.postMessage = (message: { id?: number }) => {
  if (message.id !== undefined && message.id === doomed) throw new Error('token=s3cr3t-value');
  post(message);
};

port.on('message', (request: { id: number; input?: { key?: { name?: string } } }) => {
  const name = request.input?.key?.name;
  if (name === 'exit') process.exit(7);
  if (name === 'throw') doomed = request.id;
  if (name === 'heap') {
    const keep: number[][] = [];
    for (;;) keep.push(new Array(1_000_000).fill(keep.length));
  }
});

await import('../../lib/functions/planner/plan-worker.ts');
