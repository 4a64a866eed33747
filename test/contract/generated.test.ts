/**
 * The standalone validation code is generated from the schemas; a schema edit without
 * `npm run generate` (which `npm run package` runs) fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventValidator } from '../../lib/contract/index.ts';
import {
  compileSchema,
  GENERATED_FILE,
  GENERATED_SCHEMAS,
  generateValidatorsSource,
} from '../../lib/contract/schema-compiler.ts';

describe('validators.generated.ts', () => {
  it('is what the schemas generate now', () => {
    // Compared as text: any difference means the committed code validates other schemas.
    expect(readFileSync(GENERATED_FILE, 'utf8') === generateValidatorsSource()).toBe(true);
  });

  it('finds the same issues as ajv compiling the schema now', () => {
    const bad = {
      version: 2,
      virtualCluster: { name: 'vc', namespace: 7 },
      items: [{ id: '', direction: 'up', key: { resource: 'Endpoints', name: 'x' } }],
      extra: true,
    };
    const fresh = compileSchema(GENERATED_SCHEMAS.event).validate(bad);
    expect(fresh.length).toBeGreaterThan(3);
    expect(eventValidator.validate(bad)).toEqual(fresh);
  });
});
