/**
 * Entry point of the path module (`lib/patches/path/`): the one parser and matcher of patch paths.
 */
export * from './path/index.ts';
