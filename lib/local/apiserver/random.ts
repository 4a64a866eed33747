/**
 * A small seeded PRNG (mulberry32). The emulator draws UIDs, generated-name suffixes and fault
 * decisions from it, and the local Lambda endpoint its injected faults, so one seed replays one
 * run exactly, on every platform.
 */

/** Returns a generator of floats in [0, 1) determined by `seed`. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A version-4-shaped UUID drawn from `rand`. */
export function randomUid(rand: () => number): string {
  const word = () => (Math.floor(rand() * 0x100000000) >>> 0).toString(16).padStart(8, '0');
  const a = word();
  const b = word();
  const c = word();
  const d = word();
  const variant = (8 + (Number.parseInt(c[0]!, 16) & 3)).toString(16);
  return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-${variant}${c.slice(1, 4)}-${c.slice(4)}${d}`;
}

// The alphabet of apiserver's SimpleNameGenerator: no vowels, no confusable characters.
const suffixAlphabet = 'bcdfghjklmnpqrstvwxz2456789';

/** The 5-character random suffix `generateName` appends. */
export function nameSuffix(rand: () => number): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += suffixAlphabet[Math.floor(rand() * suffixAlphabet.length)];
  return s;
}
