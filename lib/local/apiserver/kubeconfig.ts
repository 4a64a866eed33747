/**
 * The kubeconfig of an emulated cluster: a plain-HTTP server (so `insecure-skip-tls-verify: true`,
 * which client-node requires for `http://`), a token user, and a context named after the cluster.
 */
import { stringify } from 'yaml';

/** Builds the kubeconfig YAML for a cluster named `name` served at `url`. */
export function buildKubeconfig(name: string, url: string, namespace = 'default'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: `${name}-admin`, user: { token: `emulator-token-${name}` } }],
    contexts: [{ name, context: { cluster: name, user: `${name}-admin`, namespace } }],
    'current-context': name,
    preferences: {},
  });
}
