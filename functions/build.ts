/**
 * Bundles the Lambda functions into one small CommonJS file each (`dist/functions/<name>.cjs`)
 * with esbuild: what `serverless package` zips. CommonJS with a `.cjs` extension because the
 * package is `"type": "module"`: a `.js` bundle would be loaded as ESM and every invoke would
 * fail with "module is not defined". The QuickJS singlefile variant bundles cleanly.
 *
 *   node functions/build.ts            # build
 *   node functions/build.ts --analyze  # also print the largest inputs
 */

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { KUBE_CLIENT_RARELY_USED, kubeClientTrim } from '../scripts/kube-client-trim.ts';
import { onDemandEntry, onDemandModules } from '../scripts/on-demand-modules.ts';

/** Function name -> entry point. */
export const ENTRIES = { sync: 'functions/sync.ts' } as const;

/**
 * Worker threads the functions start, bundled beside them: the plan worker runs every plan of
 * the sync function under a watchdog (lib/functions/planner/). serverless.yml packages these
 * files with the functions.
 */
export const WORKERS = { 'plan-worker': 'lib/functions/planner/plan-worker.ts' } as const;

/** Where bundles are written (serverless.yml packages this folder). */
export const OUT_DIR = 'dist/functions';

/**
 * AWS SDK clients the Lambda Node.js runtime provides (the whole SDK v3): they stay out of the
 * bundle and are imported on first use. S3 (configurations, the tenant registry) is one of them
 * since it was a fifth of the bundle that every cold start parsed (docs/performance.md); the
 * others serve only some credential kinds.
 */
export const RUNTIME_PROVIDED = [
  '@aws-sdk/client-s3',
  '@aws-sdk/client-secrets-manager',
  '@aws-sdk/client-ssm',
  '@aws-sdk/client-eks',
  '@aws-sdk/credential-provider-node',
];

/**
 * Modules the functions load on first use from {@link ON_DEMAND_FILE} beside their bundle
 * (scripts/on-demand-modules.ts): the Kubernetes client's proxy and auth-provider modules, and
 * the request signer of `eks:` credentials. Out of the bundle, a cold start parses 20 % less.
 */
export const ON_DEMAND = [...KUBE_CLIENT_RARELY_USED, '@smithy/signature-v4'];

/** The file that holds {@link ON_DEMAND} (serverless.yml packages it with the functions). */
export const ON_DEMAND_FILE = 'on-demand.cjs';

/** Builds every function and worker; resolves with the bundle sizes in bytes. */
export async function buildFunctions(
  root = fileURLToPath(new URL('..', import.meta.url)),
  options: {
    /** Where to write (default {@link OUT_DIR}, relative to `root`). */
    outDir?: string;
    /** Name -> entry point (default: every function and worker). */
    entries?: Record<string, string>;
  } = {},
): Promise<{
  files: Record<string, number>;
  metafile: Metafile;
}> {
  const outdir = options.outDir ?? OUT_DIR;
  const common = {
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    minify: true,
    legalComments: 'none',
    external: RUNTIME_PROVIDED,
    metafile: true,
    logLevel: 'warning',
  } as const;
  const onDemand = await build({
    ...common,
    stdin: { contents: onDemandEntry(ON_DEMAND), resolveDir: root, loader: 'js' },
    outfile: join(outdir, ON_DEMAND_FILE),
    plugins: [kubeClientTrim],
  });
  const result = await build({
    ...common,
    entryPoints: options.entries ?? { ...ENTRIES, ...WORKERS },
    outdir,
    outExtension: { '.js': '.cjs' },
    plugins: [await onDemandModules(ON_DEMAND, ON_DEMAND_FILE), kubeClientTrim],
    // A CommonJS bundle has no import.meta: the sources' `import.meta.url` becomes the bundle's
    // own file URL, and the planner finds its worker bundle by name beside it.
    banner: { js: 'var __bundleUrl=require("node:url").pathToFileURL(__filename).href;' },
    define: {
      'import.meta.url': '__bundleUrl',
      PLAN_WORKER_FILE: JSON.stringify('./plan-worker.cjs'),
      // undici's switch for bundles (Node core sets it too): its experimental Milo HTTP parser,
      // two WebAssembly builds it never loads unless UNDICI_USE_MILO is set, stays out (150 KiB,
      // a tenth of what a cold start parses); llhttp, the parser in use, stays.
      esbuildDetection: 'true',
    },
  });
  const files: Record<string, number> = {};
  for (const built of [result, onDemand]) {
    for (const [file, info] of Object.entries(built.metafile.outputs)) files[file] = info.bytes;
  }
  return { files, metafile: result.metafile };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { files, metafile } = await buildFunctions();
  for (const [file, bytes] of Object.entries(files)) {
    console.log(`${file}  ${(bytes / 1024).toFixed(0)} KiB`);
  }
  if (process.argv.includes('--analyze')) {
    const inputs = Object.entries(metafile.outputs)
      .flatMap(([, o]) => Object.entries(o.inputs))
      .sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput)
      .slice(0, 20);
    for (const [input, info] of inputs)
      console.log(`${(info.bytesInOutput / 1024).toFixed(0).padStart(6)} KiB  ${input}`);
  }
}
