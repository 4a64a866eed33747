/**
 * Shared fixtures of the expression tests: a realistic context, awkward strings, a sandbox.
 */
import fc from 'fast-check';
import { loadQuickJS } from '../../../lib/patches/expression/instance.ts';
import { Sandbox, type SandboxHost } from '../../../lib/patches/expression/sandbox.ts';
import type { ExpressionContext } from '../../../lib/patches/types.ts';

/** A context like the pipeline builds for an Endpoints object. */
export function sampleContext(overrides: Partial<ExpressionContext> = {}): ExpressionContext {
  return {
    virtualcluster: {
      name: 'vc1',
      namespace: 'vc-vc1',
      config: {
        networking: { advanced: { clusterDomain: 'example.local' } },
        sync: { toHost: { endpoints: { enabled: true, patches: [] } } },
      },
    },
    hostObject: null,
    virtualObject: {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name: 'db',
        namespace: 'prod',
        labels: { team: 'storage' },
        annotations: { a: 'x' },
      },
      subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 5432 }] }],
    },
    path: 'metadata.annotations["a.b/c"]',
    ...overrides,
  };
}

/**
 * Strings that make the C-string boundary awkward: NULs, lone surrogates (each half, paired by
 * chance or not), U+FFFD, and any other code point.
 */
export const awkwardText = (maxLength: number) =>
  fc.string({
    unit: fc.oneof(
      fc.constantFrom('\u0000', '\ud800', '\udc00', '\ufffd'),
      fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    ),
    maxLength,
  });

/** The longest helper input a {@link testSandbox} takes. */
export const TEST_HELPER_INPUT_LENGTH = 64 * 1024;

/** A sandbox of 32 MiB with `host` behind its helpers (the engine's own limits otherwise). */
export async function testSandbox(host: SandboxHost, timeoutMs = 200): Promise<Sandbox> {
  const loader = await loadQuickJS(32 * 1024 * 1024);
  return new Sandbox(
    loader.create(),
    {
      timeoutMs,
      memoryBytes: 32 * 1024 * 1024,
      stackBytes: 64 * 1024,
      maxResultLength: 4096,
      maxHelperInputLength: TEST_HELPER_INPUT_LENGTH,
      compiledCacheSize: 10,
    },
    host,
  );
}
