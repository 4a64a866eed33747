/**
 * Runs the local object store (s3rver, see lib/local/objectstore.ts) as its own process, for
 * `serverless offline` and other "like Lambda" runs. Creates the bucket, optionally uploads a
 * configuration file, prints the endpoint and the object's `s3://` URI, and runs until SIGINT or
 * SIGTERM.
 *
 *   node scripts/object-store.ts --port 4569 --bucket configs --put vc.yaml=examples/minimal.yaml
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { startObjectStore } from '../lib/local/objectstore.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4569' },
    bucket: { type: 'string', default: 'configs' },
    directory: { type: 'string' },
    put: { type: 'string', multiple: true, default: [] },
  },
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port: expected a port number, got ${JSON.stringify(values.port)}`);
  process.exit(2);
}
const store = await startObjectStore({
  port,
  buckets: [values.bucket],
  ...(values.directory ? { directory: values.directory } : {}),
});
for (const spec of values.put) {
  const eq = spec.indexOf('=');
  if (eq <= 0) {
    console.error(`--put: expected KEY=FILE, got ${JSON.stringify(spec)}`);
    await store.close();
    process.exit(2);
  }
  const key = spec.slice(0, eq);
  await store.put(values.bucket, key, await readFile(spec.slice(eq + 1)));
  console.log(`uploaded ${store.uri(values.bucket, key)}`);
}
console.log(
  `object store listening on ${store.endpoint} (bucket ${values.bucket}, credentials S3RVER/S3RVER)`,
);

let closing = false;
const stop = async () => {
  if (closing) return;
  closing = true;
  await store.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
