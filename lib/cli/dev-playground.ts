/**
 * The playground as `endpoint-sync dev` serves it: the page of `endpoint-sync playground`, plus
 * the running stack's table (every synced object's last decision, from the forwarder's results)
 * and, for each object, the editors filled with the stack's configuration and the object as the
 * virtual cluster holds it now.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { S3Client } from '@aws-sdk/client-s3';
import { stringify } from 'yaml';
import type { KubeClient } from '../kube/index.ts';
import { NotFoundError } from '../kube/index.ts';
import { type KubeObject, parseResourceKey, type VirtualClusterIdentity } from '../model/index.ts';
import {
  LiveTable,
  type PlaygroundServer,
  type PlaygroundState,
  type ResultEvents,
  startPlaygroundServer,
} from '../playground/index.ts';
import { kindOfResource, resourceByPlural } from '../sync/index.ts';
import { evaluatePlayground } from './commands/playground.ts';

/** The parts of a running stack the playground reads (a `Stack` has them all). */
export interface PlaygroundStack {
  identity: VirtualClusterIdentity;
  virtual: { client: KubeClient };
  /** `s3://bucket/key` in the local S3, or `file://...`. */
  configUri: string;
  objectStore?: { client(): S3Client };
  forwarder: { events: ResultEvents };
}

/** The configuration's text as the function reads it now (local S3 object or file). */
async function configText(stack: PlaygroundStack): Promise<string> {
  if (stack.configUri.startsWith('file:')) return readFile(fileURLToPath(stack.configUri), 'utf8');
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(stack.configUri);
  if (!match || !stack.objectStore) return '';
  const { GetObjectCommand } = await import('@aws-sdk/client-s3');
  const answer = await stack.objectStore
    .client()
    .send(new GetObjectCommand({ Bucket: match[1], Key: match[2] }));
  return (await answer.Body?.transformToString('utf8')) ?? '';
}

/** An object as the editor shows it: without the server's bookkeeping of field owners. */
function editorText(object: KubeObject): string {
  const { managedFields: _owners, ...metadata } = object.metadata as KubeObject['metadata'] & {
    managedFields?: unknown;
  };
  return stringify({ ...object, metadata });
}

async function getOrUndefined(
  client: KubeClient,
  resource: string,
  key: { namespace: string; name: string },
): Promise<KubeObject | undefined> {
  const row = resourceByPlural(resource);
  if (!row) return undefined;
  try {
    return await client.get<KubeObject>(row, key.name, { namespace: key.namespace });
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/** The editors' state that shows one synced object: the stack's configuration and identity. */
async function liveView(stack: PlaygroundStack, key: string): Promise<PlaygroundState | undefined> {
  const item = parseResourceKey(key);
  if (!item) return undefined;
  const at = { namespace: item.namespace, name: item.name };
  const virtual = await getOrUndefined(stack.virtual.client, item.resource, at);
  if (!virtual) return undefined;
  let companion = '';
  for (const c of kindOfResource(item.resource)?.companions ?? []) {
    const where = c.keyOf(at, virtual);
    const found = where && (await getOrUndefined(stack.virtual.client, c.resource, where));
    if (found) {
      companion = editorText(found);
      break;
    }
  }
  return {
    config: await configText(stack),
    object: editorText(virtual),
    companion,
    direction: 'toHost',
    name: stack.identity.name,
    namespace: stack.identity.hostNamespace,
    markerDomain: stack.identity.markerDomain,
  };
}

/**
 * Starts the playground for a running stack on 127.0.0.1 (`port` 0: a free one). The table
 * listens from now on, so start it before the stack's first objects are made.
 */
export async function startDevPlayground(
  stack: PlaygroundStack,
  port: number,
): Promise<PlaygroundServer> {
  const table = new LiveTable(stack.forwarder.events);
  return startPlaygroundServer({
    port,
    evaluate: evaluatePlayground,
    // The first synced object when there is one, else the configuration alone.
    initial: async () => {
      const first = table.rows()[0];
      const view = first && (await liveView(stack, first.key));
      return view ?? emptyView(stack);
    },
    live: { table, view: (key) => liveView(stack, key) },
  });
}

/** The stack's configuration and identity with empty object editors. */
async function emptyView(stack: PlaygroundStack): Promise<PlaygroundState> {
  return {
    config: await configText(stack),
    object: '',
    companion: '',
    direction: 'toHost',
    name: stack.identity.name,
    namespace: stack.identity.hostNamespace,
    markerDomain: stack.identity.markerDomain,
  };
}
