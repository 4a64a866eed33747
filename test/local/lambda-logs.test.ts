/**
 * The local Lambda endpoint's log capture: an invocation whose log is wanted (`--log-type Tail`)
 * or whose output must not reach the terminal runs in a capture scope; any other runs outside
 * every scope, so that the process does not pay for async-context tracking it does not need.
 */
import { describe, expect, it } from 'vitest';
import {
  captureFunctionOutput,
  type InvocationLog,
  invocationLog,
} from '../../lib/local/lambda-logs.ts';

function tailOf(log: InvocationLog): string {
  return Buffer.from(log.tail({ version: '$LATEST', durationMs: 1, memoryMb: 128 }), 'base64')
    .toString()
    .replace(/REPORT.*$/s, '');
}

async function writeIn(log: InvocationLog, text: string): Promise<void> {
  await log.run(async () => {
    await Promise.resolve();
    process.stderr.write(`${text}\n`);
  });
}

describe('invocationLog', () => {
  it('keeps the output of an invocation whose log is wanted, or whose output is not echoed', async () => {
    const release = captureFunctionOutput();
    try {
      const wanted = invocationLog('r-wanted', true, true);
      const quiet = invocationLog('r-quiet', false, false);
      await writeIn(wanted, 'lambda-logs test: wanted');
      await writeIn(quiet, 'lambda-logs test: quiet');
      expect(tailOf(wanted)).toContain('lambda-logs test: wanted');
      expect(tailOf(quiet)).toContain('lambda-logs test: quiet');
    } finally {
      release();
    }
  });

  it('runs an echoed invocation nobody asked the log of outside any scope: nothing is kept', async () => {
    const release = captureFunctionOutput();
    try {
      const unwanted = invocationLog('r-unwanted', true, false);
      await writeIn(unwanted, 'lambda-logs test: echoed only');
      unwanted.line('platform line');
      const tail = tailOf(unwanted);
      expect(tail).not.toContain('echoed only');
      expect(tail).toContain('platform line');
    } finally {
      release();
    }
  });
});
