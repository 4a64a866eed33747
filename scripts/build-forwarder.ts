/**
 * Bundles the forwarder (`endpoint-sync forward`) into one ES module, `dist/forwarder/forward.mjs`,
 * the command the container image runs. Measured by bench/e2e.ts: loading the bundle costs about a
 * third of the memory of loading the TypeScript sources (no type-stripping loader, and only the
 * modules the forwarder reaches).
 *
 *   node scripts/build-forwarder.ts
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

/** Where the bundle is written. */
export const FORWARDER_BUNDLE = 'dist/forwarder/forward.mjs';

/**
 * Keeps code the forwarder never runs out of the bundle. Its memory grows with the code it loads
 * (about 10 MB of RSS per MB of bundle on Node 22, measured: the parsed source, its metadata,
 * the compiler's buffers), so this matters at every size:
 *
 * - `undici` resolves to scripts/forwarder-undici.cjs, the three names the Kubernetes client uses
 *   (undici's entry point, CommonJS, cannot be trimmed and loads all of undici);
 * - `yaml` is marked free of side effects, so it is dropped: the forwarder reaches it only
 *   through the tenant registry's YAML parser, which it never calls (it reads its signing key
 *   as JSON);
 * - @kubernetes/client-node's KubeConfig (`dist/config.js`) imports two names from the generated
 *   client's barrel, which also loads every model class (their static type maps keep them in):
 *   it gets the two modules that define them instead.
 */
const KUBE_CONFIG_GEN = 'kube-config-gen';

const trimForwarder: Plugin = {
  name: 'trim-forwarder',
  setup(b) {
    const undiciShim = fileURLToPath(new URL('./forwarder-undici.cjs', import.meta.url));
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
    b.onResolve({ filter: /^yaml$/ }, async (args) => {
      if (args.pluginData === trimForwarder) return undefined;
      const resolved = await b.resolve(args.path, {
        resolveDir: args.resolveDir,
        kind: args.kind,
        importer: args.importer,
        pluginData: trimForwarder,
      });
      if (resolved.errors.length > 0) return { errors: resolved.errors };
      return { path: resolved.path, sideEffects: false };
    });
  },
};

/** Builds the bundle; resolves with its size in bytes. */
export async function buildForwarder(
  root = fileURLToPath(new URL('..', import.meta.url)),
  outfile = FORWARDER_BUNDLE,
): Promise<number> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['lib/cli/forward-main.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    minify: true,
    legalComments: 'none',
    // Some CommonJS dependencies call require(); an ES module bundle must provide it.
    banner: {
      js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);",
    },
    // undici's switch for bundles: its experimental Milo parser (two WebAssembly builds, never
    // loaded unless UNDICI_USE_MILO is set) stays out of the bundle and of the heap.
    define: { esbuildDetection: 'true' },
    plugins: [trimForwarder],
    metafile: true,
    logLevel: 'warning',
  });
  return Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const bytes = await buildForwarder();
  console.log(`${FORWARDER_BUNDLE}  ${(bytes / 1024).toFixed(0)} KiB`);
}
