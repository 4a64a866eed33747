import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseEvent, parseResult } from '../../lib/contract/validate.ts';
import { signedEventIssues, verifySignature } from '../../lib/tenancy/index.ts';

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

  it('the signed event example is a real one: it verifies under the example key and holds the event above', () => {
    const jsonBlockAfter = (marker: string) => {
      const at = doc.indexOf(`<!-- ${marker} -->`);
      expect(at, marker).toBeGreaterThan(0);
      const open = doc.indexOf('\n', doc.indexOf('```', at)) + 1;
      return JSON.parse(doc.slice(open, doc.indexOf('```', open)));
    };
    const key = jsonBlockAfter('signed-event-key') as {
      tenant: string;
      keyId: string;
      key: string;
    };
    const envelope = jsonBlockAfter('signed-event-example');
    expect(signedEventIssues(envelope)).toEqual([]);
    expect(envelope).toMatchObject({ tenant: key.tenant, keyId: key.keyId });
    expect(verifySignature(envelope, Buffer.from(key.key, 'base64'))).toBe(true);
    expect(JSON.parse(envelope.event)).toEqual(blocks.find((b) => 'items' in b));
    // A changed byte of the event no longer verifies: the check can fail.
    const tampered = { ...envelope, event: envelope.event.replace('"db"', '"dc"') };
    expect(verifySignature(tampered, Buffer.from(key.key, 'base64'))).toBe(false);
  });

  it('calls the version 2 event by its version', () => {
    expect(doc).not.toMatch(/event v1 above/);
    expect(doc).toContain('--(event v2,');
  });
});
