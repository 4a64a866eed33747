/**
 * The compiled contract schemas. The JSON files are imported (not read at run time) so a bundle
 * carries them and they stay the one source of truth for both validation and documentation.
 */

import eventSchema from '../../schema/event.schema.json' with { type: 'json' };
import eventV1Schema from '../../schema/event-v1.schema.json' with { type: 'json' };
import resultSchema from '../../schema/result.schema.json' with { type: 'json' };
import { compileSchema, type SchemaValidator } from './json-schema.ts';

/** Validator of `schema/event.schema.json` (event version 2). */
export const eventValidator: SchemaValidator = compileSchema(eventSchema);

/** Validator of `schema/event-v1.schema.json` (event version 1, still accepted). */
export const eventV1Validator: SchemaValidator = compileSchema(eventV1Schema);

/** Validator of `schema/result.schema.json`. */
export const resultValidator: SchemaValidator = compileSchema(resultSchema);
