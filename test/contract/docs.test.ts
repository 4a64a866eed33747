import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseEvent, parseResult } from '../../lib/contract/validate.ts';

/** The JSON examples of docs/contracts.md must satisfy the shipped schemas. */
const doc = readFileSync(new URL('../../docs/contracts.md', import.meta.url), 'utf8');
const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!));

describe('docs/contracts.md examples', () => {
  it('has an event and a result example', () => {
    expect(blocks.filter((b) => 'items' in b)).toHaveLength(1);
    expect(blocks.filter((b) => 'results' in b)).toHaveLength(1);
  });

  it('the event example is a valid event with no item errors', () => {
    const parsed = parseEvent(blocks.find((b) => 'items' in b));
    expect(parsed.ok && parsed.itemErrors.size).toBe(0);
  });

  it('the result example is a valid result', () => {
    const parsed = parseResult(blocks.find((b) => 'results' in b));
    expect(parsed.ok ? 'valid' : parsed.error.message).toBe('valid');
  });
});
