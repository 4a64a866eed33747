/**
 * The resource limits of the configuration loader. A configuration is written by a config
 * author the platform does not trust, so every input, however hostile, must get an answer (a
 * configuration or diagnostics) quickly and in bounded memory. Each limit is far above what a
 * real virtual-cluster configuration needs; each refusal is an error diagnostic that says which
 * limit was hit and where.
 */

/** Largest configuration accepted, in UTF-8 bytes (1 MiB). */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * Most YAML tokens (scalars, indicators, line breaks...) accepted. Parsing costs per token, and a
 * dense file (`[[[[`, `- a` lines) has one token every few bytes; this keeps the worst file well
 * under a second while a real configuration uses a few thousand.
 */
export const MAX_YAML_TOKENS = 50_000;

/** Deepest nesting of mappings and lists accepted. */
export const MAX_DEPTH = 64;

/** Most anchors (`&name`) in one file. */
export const MAX_ANCHORS = 1_000;

/** Most aliases (`*name`) in one file. */
export const MAX_ALIASES = 1_000;

/**
 * Largest size of the configuration with every alias replaced by a copy of what it names, in
 * (approximate) characters of its JSON form: the value expressions receive as
 * `context.virtualcluster.config`. Stops "billion laughs" files that are small on disk but huge
 * once expanded.
 */
export const MAX_EXPANDED_SIZE = 2 * 1024 * 1024;

/**
 * Most patches in one file (all lists together). Each patch costs a parse of its path and
 * expressions here, and a compiled expression in the sandbox; real configurations have a handful.
 */
export const MAX_PATCHES = 500;

/** Most diagnostics kept for one file; the rest are counted in a last one. */
export const MAX_DIAGNOSTICS = 100;

/** `1 MiB`, `2 MiB`, `512 KiB` or `100 bytes`, for messages. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
