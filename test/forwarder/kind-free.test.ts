/**
 * The forwarder's core names no kind: its informers, queue keys, events and parked items come
 * from the kinds table, so a new synced kind is a row and a kind file, not a forwarder change.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RESOURCES } from '../../lib/model/index.ts';

const FILES = [
  'forwarder.ts',
  'dispatcher.ts',
  'event-builder.ts',
  'watches.ts',
  'own-writes.ts',
  'reference-index.ts',
  'virtual-writer.ts',
];

/** The source without comments (block, line and TSDoc). */
function code(path: string): string {
  return readFileSync(new URL(`../../lib/forwarder/${path}`, import.meta.url), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1');
}

/** Every kind and plural of the resource table, as a quoted string or a table lookup. */
function kindMentions(source: string): string[] {
  const names = Object.values(RESOURCES).flatMap((r) => [r.kind, r.plural]);
  const found: string[] = [];
  for (const name of names) {
    if (new RegExp(`['"\`]${name}['"\`/]`).test(source)) found.push(name);
  }
  for (const match of source.matchAll(/\bRESOURCES\s*\.\s*(\w+)/g)) found.push(match[0]);
  return found;
}

describe('the forwarder core names no kind', () => {
  it.each(FILES)('%s', (file) => {
    expect(kindMentions(code(file))).toEqual([]);
  });

  it('the check finds a kind named in code', () => {
    expect(kindMentions("const r = 'endpoints'; x(RESOURCES.services, `Service`)").sort()).toEqual(
      ['RESOURCES.services', 'Service', 'endpoints'].sort(),
    );
  });
});
