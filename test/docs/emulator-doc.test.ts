/**
 * docs/emulator.md says what the emulator serves: every subresource a resource of the emulator
 * serves is named in the doc, and its "Not emulated" section does not list one that is served
 * (it listed `scale` while Deployments served it).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RESOURCES } from '../../lib/local/apiserver/resources.ts';

const doc = readFileSync(new URL('../../docs/emulator.md', import.meta.url), 'utf8');
const notEmulated = doc.slice(
  doc.indexOf('## Not emulated'),
  doc.indexOf('\n## ', doc.indexOf('## Not emulated') + 1),
);

const served = RESOURCES.flatMap((r) =>
  (r.subresources ?? []).filter((s) => s !== 'status').map((s) => ({ resource: r.name, sub: s })),
);

describe('docs/emulator.md', () => {
  it('has a Not emulated section', () => {
    expect(notEmulated).toMatch(/^## Not emulated\n/);
  });

  it.each(served)(
    'names the $sub subresource of $resource as served, not as missing',
    ({ sub }) => {
      expect(doc.slice(0, doc.indexOf('## Not emulated'))).toContain(`\`${sub}\` subresource`);
      // Named in "Not emulated" only as an exception ("other than ... `scale`").
      const mention = notEmulated.indexOf(`\`${sub}\``);
      if (mention >= 0) expect(notEmulated.slice(0, mention)).toMatch(/other than [^,]*$/);
    },
  );
});
