/** Finding a free TCP port on loopback. */
import { createServer } from 'node:net';

/**
 * A free TCP port on 127.0.0.1 (free when this resolves), for a program that must be told its
 * port (etcd, kube-apiserver) and for tests that pin one.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
