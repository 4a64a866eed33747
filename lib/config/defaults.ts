/**
 * The defaults of docs/configuration.md, merged into every configuration before use. They live in
 * one place so the loader, the JSON Schema test and the docs cannot drift apart.
 */
import { SYNCED_RESOURCES, type SyncSection } from '../model/index.ts';

/** The default values of the owned configuration keys, in the shape of the YAML file. */
export const DEFAULTS = deepFreeze({
  sync: {
    toHost: {
      // One section per row of the model's synced-resource table.
      ...(Object.fromEntries(
        SYNCED_RESOURCES.map((row) => [row.section, { enabled: row.enabledByDefault }]),
      ) as Record<SyncSection, { enabled: boolean }>),
      namespaces: { enabled: false, mappings: { byName: {} as Record<string, string> } },
    },
  },
  networking: {
    advanced: { clusterDomain: 'cluster.local' },
  },
});

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null) deepFreeze(child);
  }
  return Object.freeze(value);
}

/**
 * Returns a copy of `raw` with every default filled in where the file leaves the key out (or
 * sets it to null). Values the file gives are never replaced; `raw` is not modified.
 */
export function mergeDefaults(raw: Record<string, unknown>): Record<string, unknown> {
  return mergeInto(structuredClone(raw), DEFAULTS);
}

function mergeInto(target: Record<string, unknown>, defaults: object): Record<string, unknown> {
  for (const [key, value] of Object.entries(defaults)) {
    const current = target[key];
    if (typeof value === 'object' && value !== null) {
      if (current === undefined || current === null) {
        target[key] = mergeInto({}, value);
      } else if (typeof current === 'object' && !Array.isArray(current)) {
        mergeInto(current as Record<string, unknown>, value);
      }
    } else if (current === undefined || current === null) {
      target[key] = value;
    }
  }
  return target;
}
