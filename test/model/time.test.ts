import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rfc3339 } from '../../lib/model/index.ts';

describe('rfc3339', () => {
  it('writes whole seconds in UTC, as toISOString without the milliseconds, whatever came before', () => {
    const dates = fc.date({
      min: new Date(-8.64e15),
      max: new Date(8.64e15),
      noInvalidDate: true,
    });
    fc.assert(
      fc.property(fc.array(dates, { minLength: 1, maxLength: 8 }), (ds) => {
        for (const d of ds) {
          expect(rfc3339(d.getTime())).toBe(d.toISOString().replace(/\.\d{3}Z$/, 'Z'));
          // A second date within the same second is written as that second too.
          const later = new Date(d.getTime() - (((d.getTime() % 1000) + 1000) % 1000) + 999);
          if (later.getTime() <= 8.64e15)
            expect(rfc3339(later.getTime())).toBe(rfc3339(d.getTime()));
        }
      }),
    );
    expect(rfc3339(Date.parse('2026-11-28T07:01:02.999Z'))).toBe('2026-11-28T07:01:02Z');
    expect(rfc3339(Date.parse('2026-11-28T07:01:03.000Z'))).toBe('2026-11-28T07:01:03Z');
  });
});
