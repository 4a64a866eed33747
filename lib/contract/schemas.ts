/**
 * The validators of the shipped schemas: ajv's standalone code generated from
 * `schema/*.schema.json` at build time (`validators.generated.ts`, see `schema-compiler.ts`),
 * with the facts of each schema its error messages need. The schema files stay the one source
 * of truth; a test fails when the generated code is older than they are.
 */
import { type CompiledSchema, type SchemaValidator, schemaValidator } from './json-schema.ts';
import * as generated from './validators.generated.ts';

/** Validator of `schema/event.schema.json` (event version 2). */
export const eventValidator: SchemaValidator = schemaValidator(
  generated.facts.event,
  generated.event as CompiledSchema,
);

/** Validator of `schema/event-v1.schema.json` (event version 1, still accepted). */
export const eventV1Validator: SchemaValidator = schemaValidator(
  generated.facts.eventV1,
  generated.eventV1 as CompiledSchema,
);

/** Validator of `schema/result.schema.json`. */
export const resultValidator: SchemaValidator = schemaValidator(
  generated.facts.result,
  generated.result as CompiledSchema,
);

/** Validator of `schema/signed-event.schema.json` (the envelope of a signed event). */
export const signedEventValidator: SchemaValidator = schemaValidator(
  generated.facts.signedEvent,
  generated.signedEvent as CompiledSchema,
);

/** Validator of `schema/tenant.schema.json` (one tenant registry entry). */
export const tenantValidator: SchemaValidator = schemaValidator(
  generated.facts.tenant,
  generated.tenant as CompiledSchema,
);

/** Validator of `schema/test.schema.json` (an `endpoint-sync test` file). */
export const testFileValidator: SchemaValidator = schemaValidator(
  generated.facts.testFile,
  generated.testFile as CompiledSchema,
);
