/**
 * The defaults of SEMANTICS 2, merged into every configuration before use. They live in one
 * place so the loader, the JSON Schema test and the docs cannot drift apart.
 */

/** The default values of the owned configuration keys, in the shape of the YAML file. */
export const DEFAULTS = deepFreeze({
  sync: {
    toHost: {
      endpoints: { enabled: true },
      services: { enabled: true },
      // Referenced Secrets and ConfigMaps are copied to the host only when their kind's sync is
      // enabled; on by default (as in the reference project) so a reference patch works as written.
      secrets: { enabled: true },
      configMaps: { enabled: true },
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
