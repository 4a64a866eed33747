/**
 * A cheap first pass over the configuration text, before the YAML library builds a tree from it:
 * the size, the number of YAML tokens and the nesting that can be seen token by token. The
 * library's parser is linear but costs far more per token than its lexer, and its tree builder
 * recurses once per nesting level, so these are refused here, in time proportional to the text.
 * Nesting is seen three ways: brackets, block indicators on one line (`- - - x`) and indentation.
 */
import { CST, Lexer } from 'yaml';
import { formatBytes, MAX_CONFIG_BYTES, MAX_DEPTH, MAX_YAML_TOKENS } from './limits.ts';

/** Why the text is refused before parsing, and the 0-based offset to report it at. */
export interface ScanProblem {
  offset: number;
  message: string;
}

/** Tokens the lexer emits that are not characters of the text (document start, flow end...). */
const CONTROL_TOKENS = new Set([CST.DOCUMENT, CST.FLOW_END, CST.SCALAR]);

/** The first limit `text` breaks, or `undefined` when it may be parsed. */
export function scanYaml(text: string): ScanProblem | undefined {
  // UTF-16 length bounds the UTF-8 size from below and 3x from above; count exactly only between.
  if (text.length > MAX_CONFIG_BYTES || Buffer.byteLength(text, 'utf8') > MAX_CONFIG_BYTES) {
    return {
      offset: 0,
      message: `the configuration is larger than ${formatBytes(MAX_CONFIG_BYTES)} (${Buffer.byteLength(text, 'utf8')} bytes); a configuration is far smaller, move data out of it`,
    };
  }
  let tokens = 0;
  let offset = 0;
  let flowDepth = 0;
  let lineIndicators = 0;
  /** Whether the next token starts a line, and the indentation seen at its start. */
  let lineStart = true;
  let indent = 0;
  /** Indentations of the open block levels: deeper lines open levels, shallower ones close them. */
  const indents: number[] = [];
  for (const source of new Lexer().lex(text)) {
    tokens++;
    const type = CST.tokenType(source);
    if (lineStart && flowDepth === 0 && type !== 'newline' && type !== 'comment') {
      if (type === 'space') {
        indent = source.length;
      } else {
        // A line with content: each deeper indentation is one more level of nesting (the text
        // of multi-line scalars is one token, so its indentation never gets here).
        while (indents.length > 0 && indents[indents.length - 1]! >= indent) indents.pop();
        indents.push(indent);
        if (indents.length > MAX_DEPTH) return tooDeep(offset);
        lineStart = false;
      }
    }
    if (tokens > MAX_YAML_TOKENS) {
      return {
        offset,
        message: `the configuration has more than ${MAX_YAML_TOKENS} YAML tokens (values, keys, indicators, line breaks); it is refused so that loading stays fast, make it smaller`,
      };
    }
    switch (type) {
      case 'flow-map-start':
      case 'flow-seq-start':
        flowDepth++;
        if (flowDepth > MAX_DEPTH) return tooDeep(offset);
        break;
      case 'flow-map-end':
      case 'flow-seq-end':
        if (flowDepth > 0) flowDepth--;
        break;
      case 'newline':
        lineIndicators = 0;
        lineStart = true;
        indent = 0;
        break;
      case 'seq-item-ind':
      case 'explicit-key-ind':
        // `- - - - x` and `? ? ? x` nest one level per indicator on a single line.
        lineIndicators++;
        if (lineIndicators > MAX_DEPTH) return tooDeep(offset);
        break;
      default:
        break;
    }
    if (!CONTROL_TOKENS.has(source)) offset += source.length;
  }
  return undefined;
}

/** The diagnostic text for nesting past {@link MAX_DEPTH}, shared with the tree checks. */
export function tooDeepMessage(): string {
  return `the configuration nests mappings and lists more than ${MAX_DEPTH} levels deep; flatten it`;
}

function tooDeep(offset: number): ScanProblem {
  return { offset, message: tooDeepMessage() };
}
