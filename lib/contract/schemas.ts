/**
 * The compiled contract schemas. The JSON files are imported (not read at run time) so a bundle
 * carries them and they stay the one source of truth for both validation and documentation.
 */
import eventSchema from '../../schema/event.schema.json' with { type: 'json' };
import resultSchema from '../../schema/result.schema.json' with { type: 'json' };
import { compileSchema, type SchemaValidator } from './json-schema.ts';

/** Validator of `schema/event.schema.json`. */
export const eventValidator: SchemaValidator = compileSchema(eventSchema);

/** Validator of `schema/result.schema.json`. */
export const resultValidator: SchemaValidator = compileSchema(resultSchema);
