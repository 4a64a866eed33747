/**
 * The embedded stack's start: its two sides start at once, and still share one kubeconfig folder
 * (each side used to make its own temporary folder when both asked before either had one).
 */
import { dirname } from 'node:path';
import { expect, it } from 'vitest';
import { startStack } from '../../lib/local/stack.ts';

it('writes both kubeconfigs into one folder when none is given', async () => {
  const stack = await startStack({ startForwarder: false, echoFunctionLogs: false });
  try {
    expect(dirname(stack.virtual.kubeconfigPath)).toBe(dirname(stack.host.kubeconfigPath));
    expect(dirname(stack.virtual.kubeconfigPath)).toMatch(/endpoint-sync-dev-/);
  } finally {
    await stack.close();
  }
});
