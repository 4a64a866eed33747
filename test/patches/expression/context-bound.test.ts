/**
 * contextSizeBound is what lets the native path skip building the sandbox's context copy: it
 * must never be below the real size of that copy.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  contextJson,
  contextSizeBound,
  planContext,
} from '../../../lib/patches/expression/context-data.ts';
import type { ExpressionContext } from '../../../lib/patches/types.ts';

const key = fc.constantFrom('metadata', 'labels', 'team', 'a', 'subsets', '0', 'x', '__proto__');
const path = fc.array(key, { maxLength: 4 });
const top = fc.constantFrom('virtualObject', 'hostObject', 'path', 'virtualcluster');

describe('contextSizeBound', () => {
  it('is at least the length of the copy the sandbox gets', () => {
    fc.assert(
      fc.property(
        // undefined as well: a missing top-level entry makes the copy keep the whole level.
        fc.option(fc.jsonValue({ maxDepth: 4 }), { nil: undefined }),
        fc.option(fc.jsonValue({ maxDepth: 4 }), { nil: undefined }),
        fc.array(fc.tuple(top, path), { minLength: 1, maxLength: 3 }),
        fc.string(),
        (virtualObject, hostObject, reads, p) => {
          const context: ExpressionContext = {
            virtualcluster: { name: 'vc', namespace: 'ns', config: {} },
            virtualObject,
            hostObject,
            path: p,
          };
          const plan = planContext(reads.map(([t, rest]) => [t, ...rest]));
          const exact = contextJson(context, plan).length;
          expect(contextSizeBound(context, plan, 1e9)).toBeGreaterThanOrEqual(exact);
          // Under a limit it either still bounds the size or gives up.
          const limited = contextSizeBound(context, plan, exact);
          expect(limited === Number.POSITIVE_INFINITY || limited >= exact).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('holds when something on the host adds the key read to Object.prototype', () => {
    const plan = planContext([['virtualObject', 'metadata', 'polluted']]);
    const context: ExpressionContext = {
      virtualcluster: { name: 'vc', namespace: 'ns', config: {} },
      virtualObject: { metadata: { annotations: { big: 'x'.repeat(10_000) } } },
      hostObject: null,
      path: 'p',
    };
    const proto = Object.prototype as Record<string, unknown>;
    proto['polluted'] = 'from the prototype';
    try {
      // prune keeps the whole metadata (the key is not its own): so must the bound.
      expect(contextSizeBound(context, plan, 1e9)).toBeGreaterThanOrEqual(
        contextJson(context, plan).length,
      );
    } finally {
      delete proto['polluted'];
    }
  });
});
