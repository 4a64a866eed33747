/**
 * An esbuild plugin that moves modules a bundle rarely runs into a second file beside it. Each
 * import of one gets a stand-in whose exports are getters that load that file the first time
 * one of them is read: a cold start neither parses nor runs the modules, and a process that
 * needs one (a kubeconfig with a proxy, an `eks:` credential) loads it then. The stand-in's
 * names come from the modules themselves at build time.
 */
import type { Plugin } from 'esbuild';

const NAMESPACE = 'on-demand';

/** The plugin for a bundle whose `modules` are written to `file` beside it (see {@link onDemandEntry}). */
export async function onDemandModules(modules: readonly string[], file: string): Promise<Plugin> {
  const names = new Map<string, string[]>();
  for (const module of modules) names.set(module, await exportNames(module));
  const filter = new RegExp(
    `^(${modules.map((m) => m.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})$`,
  );
  return {
    name: 'on-demand-modules',
    setup(b) {
      b.onResolve({ filter }, (args) =>
        args.namespace === NAMESPACE ? undefined : { path: args.path, namespace: NAMESPACE },
      );
      b.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
        contents: standIn(args.path, names.get(args.path) ?? [], file),
        loader: 'js',
      }));
    },
  };
}

/** The entry (esbuild `stdin` contents) of the file that holds `modules`, keyed by name. */
export function onDemandEntry(modules: readonly string[]): string {
  const lines = modules.map((m) => `  ${JSON.stringify(m)}: require(${JSON.stringify(m)}),`);
  return `module.exports = {\n${lines.join('\n')}\n};\n`;
}

/** Every name `module` exports: its ES module namespace and, for CommonJS, `module.exports`'s keys. */
async function exportNames(module: string): Promise<string[]> {
  const namespace = (await import(module)) as Record<string, unknown>;
  const names = new Set(Object.keys(namespace));
  const commonJs = namespace['default'];
  if (typeof commonJs === 'object' && commonJs !== null) {
    for (const key of Object.keys(commonJs)) names.add(key);
  }
  names.delete('default');
  return [...names].sort();
}

/**
 * The stand-in for `module`: CommonJS whose exports read the real module on first access. The
 * path is built at run time (`__dirname` is the bundle's folder), so esbuild leaves that
 * `require` alone.
 */
function standIn(module: string, names: string[], file: string): string {
  const getters = names.map(
    (name) =>
      `Object.defineProperty(exports, ${JSON.stringify(name)}, { enumerable: true, get: () => load()[${JSON.stringify(name)}] });`,
  );
  return [
    `const file = require('node:path').join(__dirname, ${JSON.stringify(file)});`,
    'let real;',
    `const load = () => (real ??= require(file)[${JSON.stringify(module)}]);`,
    ...getters,
  ].join('\n');
}
