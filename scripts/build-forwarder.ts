/**
 * Bundles the forwarder (`endpoint-sync forward`) into one ES module, `dist/forwarder/forward.mjs`,
 * the command the container image runs. Measured by bench/e2e.ts: loading the bundle costs about a
 * third of the memory of loading the TypeScript sources (no type-stripping loader, and only the
 * modules the forwarder reaches).
 *
 *   node scripts/build-forwarder.ts
 */
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { kubeClientTrim } from './kube-client-trim.ts';

/** Where the bundle is written. */
export const FORWARDER_BUNDLE = 'dist/forwarder/forward.mjs';

/**
 * Keeps code the forwarder never runs out of the bundle, besides {@link kubeClientTrim}: `yaml`
 * is marked free of side effects, so it is dropped. The forwarder reaches it only through the
 * tenant registry's YAML parser, which it never calls (it reads its signing key as JSON).
 */
const trimForwarder: Plugin = {
  name: 'trim-forwarder',
  setup(b) {
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
    plugins: [kubeClientTrim, trimForwarder],
    metafile: true,
    logLevel: 'warning',
  });
  return Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const bytes = await buildForwarder();
  console.log(`${FORWARDER_BUNDLE}  ${(bytes / 1024).toFixed(0)} KiB`);
}
