/**
 * The YAML library's errors in words that carry no text of the file. Some of the library's
 * messages quote the source (`Unexpected <text> in collection`, `Unresolved tag: <tag>`,
 * `Block scalar header includes extra characters: <text>`), and a diagnostic goes into reasons,
 * logs and Events: a file that is not a configuration at all (a credentials file, the process
 * environment) must not come back through them. So a message is either one of the library's
 * fixed sentences, checked word for word against the list below, or a description of its error
 * code; the position is in the diagnostic.
 */
import type { YAMLError } from 'yaml';
import { tooDeepMessage } from './yaml-scan.ts';

const FLOW = ['flow map', 'flow sequence'];
const TOKEN_TYPES = [
  'byte-order-mark',
  'doc-mode',
  'doc-start',
  'space',
  'comment',
  'newline',
  'directive-line',
  'anchor',
  'tag',
  'seq-item-ind',
  'explicit-key-ind',
  'map-value-ind',
  'flow-map-start',
  'flow-map-end',
  'flow-seq-start',
  'flow-seq-end',
  'flow-error-end',
  'comma',
  'block-scalar-header',
  'alias',
  'scalar',
  'single-quoted-scalar',
  'double-quoted-scalar',
  'block-scalar',
  'block-map',
  'block-seq',
  'flow-collection',
  'document',
  'doc-end',
  'error',
];

/** The library's messages that quote nothing from the file. */
const FIXED_MESSAGES = new Set<string>([
  'An alias node must not specify any properties',
  'Alias cannot be an empty string',
  'Alias ending in : is ambiguous',
  'Anchor cannot be an empty string',
  'Anchor ending in : is ambiguous',
  'All sequence items must start at the same column',
  'A block sequence may not be used as an implicit map key',
  'Nested mappings are not allowed in compact mappings',
  'Block scalar header not found',
  'Map comment with trailing content',
  'The : indicator must be at most 1024 chars after the start of an implicit block mapping key',
  'The : indicator must be at most 1024 chars after the start of an implicit flow sequence key',
  "Missing closing 'quote",
  'Missing closing "quote',
  'Block collection cannot start on same line with directives-end marker',
  'Comments must be separated from other tokens by white space characters',
  'Implicit map keys need to be followed by map values',
  'Missing directives-end indicator line',
  'Missing directives-end/doc-start indicator line',
  'Sequence item without - indicator',
  'Tags and anchors must be separated from the next token by white space',
  'Missing newline after block sequence props',
  'Implicit keys need to be on a single line',
  'Implicit keys of flow sequence pairs need to be on a single line',
  'A node can have at most one anchor',
  'A node can have at most one tag',
  'Tabs are not allowed as indentation',
  'Unexpected doc-end without preceding document',
  ...FLOW.flatMap((name) => [
    `Missing , between ${name} items`,
    `Missing , or : between ${name} items`,
    `Missing space after : in ${name}`,
    `Unexpected , in ${name}`,
    `Unexpected empty item in ${name}`,
  ]),
  ...TOKEN_TYPES.flatMap((type) => [
    `Unexpected ${type} token`,
    `Unexpected ${type} at node end`,
    `Expected a flow scalar value, but found: ${type}`,
    `Unsupported token ${type}`,
  ]),
]);

/** What each error code means, for the messages that are not on the list. */
const BY_CODE: Record<string, string> = {
  ALIAS_PROPS: 'an alias (*name) may not have a tag or anchor',
  BAD_ALIAS: 'an anchor or alias name is empty or ends in ":"',
  BAD_COLLECTION_TYPE: 'a tag does not fit the kind of value it is on',
  BAD_DIRECTIVE: 'a %YAML or %TAG directive is malformed',
  BAD_DQ_ESCAPE:
    'a double-quoted string has an invalid escape sequence (write a backslash as \\\\)',
  BAD_INDENT: 'the indentation is wrong',
  BAD_PROP_ORDER: 'an anchor or tag is in the wrong place',
  BAD_SCALAR_START: 'a plain value starts with a character YAML reserves (@ or `); quote the value',
  BLOCK_AS_IMPLICIT_KEY: 'a mapping or list is used as a key',
  BLOCK_IN_FLOW: 'a block value is inside [ ] or { }',
  IMPOSSIBLE: 'the YAML could not be read',
  KEY_OVER_1024_CHARS: 'a key is longer than 1024 characters',
  MISSING_CHAR: 'a character is missing (a closing quote or bracket, a ":" or a ",")',
  MULTILINE_IMPLICIT_KEY: 'a key spans several lines',
  MULTIPLE_ANCHORS: 'a value has two anchors',
  MULTIPLE_TAGS: 'a value has two tags',
  NON_STRING_KEY: 'a key is not a string',
  TAB_AS_INDENT: 'a tab is used for indentation; indent with spaces',
  TAG_RESOLVE_FAILED: 'a tag (!name or !!name) is unknown or does not fit its value; remove it',
  UNEXPECTED_TOKEN: 'something unexpected is here (is the file YAML?)',
};

/** The library's message without its position suffix, when it quotes nothing from the file. */
function fixedMessage(error: YAMLError): string | undefined {
  const first = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
  return FIXED_MESSAGES.has(first) ? first : undefined;
}

/** A message for a YAML library error or warning that names no text of the file. */
export function yamlErrorMessage(error: YAMLError): string {
  if (error.code === 'RESOURCE_EXHAUSTION') return tooDeepMessage();
  if (error.code === 'MULTIPLE_DOCS') {
    return 'the file holds more than one YAML document (a "---" line between them); a configuration is one document, merge them';
  }
  const fixed = fixedMessage(error);
  const meaning = BY_CODE[error.code] ?? 'the YAML could not be read';
  return `YAML syntax: ${fixed ?? meaning}`;
}
