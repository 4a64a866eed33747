/**
 * An esbuild plugin for every bundle that carries @kubernetes/client-node (the forwarder, the
 * sync function and its plan worker). A process holds about 10 MB of memory per MB of code it
 * loads, and a cold start parses all of it, so what the client reaches but never runs stays out:
 *
 * - `undici` resolves to scripts/undici-client.cjs, the three names the client's transport uses
 *   (undici's entry point, CommonJS, cannot be trimmed and loads all of undici);
 * - the client's KubeConfig (`dist/config.js`) imports two names from the generated client's
 *   barrel, which also loads every model class (their static type maps keep them in): it gets the
 *   two modules that define them instead.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';

const KUBE_CONFIG_GEN = 'kube-config-gen';

export const kubeClientTrim: Plugin = {
  name: 'kube-client-trim',
  setup(b) {
    const undiciShim = fileURLToPath(new URL('./undici-client.cjs', import.meta.url));
    b.onResolve({ filter: /^undici$/ }, () => ({ path: undiciShim }));
    b.onResolve({ filter: /^\.\/gen\/index\.js$/ }, (args) =>
      /[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]config\.js$/.test(args.importer)
        ? { path: args.importer, namespace: KUBE_CONFIG_GEN }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: KUBE_CONFIG_GEN }, (args) => ({
      contents: [
        "export { createConfiguration } from './gen/configuration.js';",
        "export { ServerConfiguration } from './gen/servers.js';",
      ].join('\n'),
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};

/**
 * Modules the client imports for kubeconfigs a function rarely meets: a `proxy-url` (SOCKS and
 * HTTP proxies) and the OIDC, Azure and GCP auth providers. The client imports them at the top of
 * its KubeConfig, so a bundle that carries them parses and runs them on every cold start; the
 * function bundle loads them on demand (scripts/on-demand-modules.ts).
 */
export const KUBE_CLIENT_RARELY_USED = [
  'socks',
  'socks-proxy-agent',
  'hpagent',
  'openid-client',
  'jsonpath-plus',
];
