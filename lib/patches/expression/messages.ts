/**
 * Error messages of expressions that never carry data. What an expression throws can hold the
 * value it was working on (`JSON.parse(value)` of a token: "unexpected token: '<the token>'";
 * `(() => { throw new Error(value); })()`), and the message goes into reasons, logs and Kubernetes
 * Events. So a thrown value is reported by its kind, its error class, where it was thrown, and
 * only a message known to say nothing about the data:
 *
 * - a fixed QuickJS message ("not a function"), or one of the helpers' own;
 * - a QuickJS message with placeholders ("cannot read property '%s' of undefined"), each filled
 *   in only when the text is a name or literal written in the expression's source (the config
 *   author wrote it, it is not data) and shown as `…` otherwise;
 * - a message that is exactly a string literal of the source (`throw new Error("no team label")`).
 *
 * Anything else is withheld, with a note saying so.
 */
import { QUICKJS_MESSAGES } from './quickjs-messages.ts';

/** A thrown value as the prelude describes it, without running any of its code. */
export interface Thrown {
  /** `error` for real Error objects (Error.isError), else the kind of value. */
  type: string;
  name?: string;
  message?: string;
  /** A thrown string (compared with the source's literals, never shown otherwise). */
  string?: string;
  /** Where it was thrown, in the expression's source (1-based). */
  line?: number;
  column?: number;
}

/** Error classes whose name is shown (any other name may be data). */
const ERROR_NAMES = new Set([
  'Error',
  'TypeError',
  'RangeError',
  'SyntaxError',
  'ReferenceError',
  'EvalError',
  'URIError',
  'InternalError',
  'AggregateError',
  'InvalidCharacterError',
  'NamingError',
]);

/** Words a type placeholder may show. */
const TYPE_WORDS = new Set([
  'null',
  'undefined',
  'string',
  'number',
  'boolean',
  'bigint',
  'symbol',
  'object',
  'function',
  'in',
  'of',
  'WeakMap',
  'WeakSet',
  'WeakRef',
  'FinalizationRegistry',
  'Date',
  'RegExp',
  'Map',
  'Set',
  'Promise',
  'ArrayBuffer',
  'DataView',
  'Symbol',
  'BigInt',
]);

/**
 * How a placeholder of a template is filled in: a source name, a type word, a limit (digits, a
 * number the engine's options set), or never.
 */
type Slot = 'name' | 'type' | 'limit' | 'never';

/** QuickJS's and the prelude's messages with placeholders (`%s`, in order, with their slots). */
const TEMPLATES: readonly [string, ...Slot[]][] = [
  ["'%s' is read-only", 'name'],
  ['invalid value used as %s key', 'type'],
  ['cannot read property of %s', 'type'],
  ['%s is not a constructor', 'name'],
  ["'%s' is a reserved identifier", 'name'],
  ["cannot set property '%s' of %s", 'name', 'type'],
  ["cannot read property '%s' of %s", 'name', 'type'],
  ['invalid array index: %s', 'never'],
  ['%s is not initialized', 'name'],
  ['%s object expected', 'type'],
  ["'%s' is not defined", 'name'],
  ["unexpected token in expression: '%s'", 'name'],
  ["unexpected token: '%s'", 'name'],
  ["redeclaration of '%s'", 'name'],
  ["undefined private field '%s'", 'name'],
  ["private class field '%s' does not exist", 'name'],
  ["private class field '%s' already exists", 'name'],
  ["cannot define variable '%s'", 'name'],
  ["Unexpected token '%s'", 'never'],
  ["expecting '%s'", 'never'],
  ["duplicate modifier: '%s'", 'never'],
  ["a declaration in the head of a for-%s loop can't have an initializer", 'type'],
  ['unsupported keyword: %s', 'name'],
  ['too many arguments in function call (only %s allowed)', 'never'],
  [
    'virtualToHostDNS expects a string of the form <name>.<namespace>.svc[.<cluster-domain>], got %s',
    'type',
  ],
  // The prelude's bound of the helpers' input (its length is not said: it describes data).
  ['atob: the string is longer than the %s characters the expression helpers take', 'limit'],
  ['btoa: the string is longer than the %s characters the expression helpers take', 'limit'],
  [
    'virtualToHostDNS: the string is longer than the %s characters the expression helpers take',
    'limit',
  ],
];

/** The helpers' own fixed messages (the prelude's and the DNS reasons below). */
const HELPER_MESSAGES = [
  'atob: 1 argument required, but only 0 present',
  'btoa: 1 argument required, but only 0 present',
  'atob: the string to be decoded is not correctly encoded base64 (only A-Z a-z 0-9 + / and up to two trailing "=" are allowed)',
  'btoa: the string to be encoded contains a character outside of the Latin1 range; encode text to UTF-8 bytes first',
  'creating functions from strings is not available in expressions',
  'eval is not available in expressions',
];

/** Why `virtualToHostDNS` refused a name, without the name (see {@link dnsFailure}). */
const DNS_REASONS = [
  'it has fewer than three dot-separated parts',
  'the service name is not a DNS-1123 label',
  'the namespace is not a DNS-1123 label',
  'the third part is not "svc"',
  'the cluster domain contains an invalid label',
  'the namespace is not synced to any host namespace this virtual cluster may use',
];
const DNS_FORM = '<name>.<namespace>.svc[.<cluster-domain>]';
const dnsMessage = (reason: string) =>
  `virtualToHostDNS cannot translate the value: ${reason}; expected ${DNS_FORM}, e.g. my-svc.default.svc`;

/** Every fixed message, with the word-aligned tails of QuickJS's (the build shares tails). */
const KNOWN = new Set<string>([...HELPER_MESSAGES, ...DNS_REASONS.map(dnsMessage)]);
for (const m of QUICKJS_MESSAGES) {
  KNOWN.add(m);
  for (let i = m.indexOf(' '); i >= 0; i = m.indexOf(' ', i + 1)) {
    const tail = m.slice(i + 1);
    if (tail.includes(' ')) KNOWN.add(tail);
  }
}

const COMPILED_TEMPLATES = TEMPLATES.map(([text, ...slots]) => ({
  pattern: new RegExp(`^${text.split('%s').map(escapeRegExp).join('(.*)')}$`, 's'),
  parts: text.split('%s'),
  slots,
}));

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Marks a message that was not shown. */
export const WITHHELD = '(message not shown: it may contain data)';

/**
 * `message` when it is known to carry no data (see the module comment), with placeholders not
 * written in the source replaced by `…`; `undefined` when it must be withheld. `names` are the
 * identifiers, property names and string literals of the expression's source.
 */
export function safeMessage(message: string, names: ReadonlySet<string>): string | undefined {
  if (KNOWN.has(message) || names.has(message)) return message;
  for (const t of COMPILED_TEMPLATES) {
    const m = t.pattern.exec(message);
    if (m === null) continue;
    let out = t.parts[0]!;
    for (let i = 0; i < t.slots.length; i++) {
      const text = m[i + 1]!;
      const slot = t.slots[i];
      const shown =
        (slot === 'name' && names.has(text)) ||
        (slot === 'type' && TYPE_WORDS.has(text)) ||
        (slot === 'limit' && /^[0-9]{1,15}$/.test(text));
      out += (shown ? text : '…') + t.parts[i + 1]!;
    }
    return out;
  }
  return undefined;
}

/** The message of a `runtime` failure: what was thrown, and where, never data. */
export function thrownMessage(t: Thrown, names: ReadonlySet<string>): string {
  const where =
    t.line !== undefined && t.column !== undefined && t.line >= 1
      ? ` (line ${t.line}, column ${t.column})`
      : '';
  if (t.type === 'string') {
    const s = t.string ?? '';
    return `expression threw: ${names.has(s) ? JSON.stringify(s) : `a string ${WITHHELD}`}${where}`;
  }
  if (t.type !== 'error' && t.type !== 'object' && t.type !== 'function' && t.type !== 'array') {
    const kind = t.type === 'null' || t.type === 'undefined' ? t.type : `a ${t.type}`;
    return `expression threw: ${kind}${where}`;
  }
  const name =
    t.name !== undefined && (ERROR_NAMES.has(t.name) || names.has(t.name))
      ? t.name
      : t.type === 'error'
        ? 'an error'
        : t.type === 'array'
          ? 'an array'
          : 'an object';
  if (t.message === undefined || t.message === '') return `expression threw: ${name}${where}`;
  const message = safeMessage(t.message, names);
  return `expression threw: ${name}: ${message ?? WITHHELD}${where}`;
}

/**
 * The message the sandbox's `virtualToHostDNS` throws for a name the naming rules refused: the
 * reason, without the name (the rules' own message quotes it).
 */
export function dnsFailure(namingMessage: string): string {
  const why = /: ([^:]*); expected /s.exec(namingMessage)?.[1] ?? '';
  const reason = /fewer than three/.test(why)
    ? DNS_REASONS[0]
    : /is not synced to any host namespace/.test(why)
      ? DNS_REASONS[5]
      : /^the service name /.test(why)
        ? DNS_REASONS[1]
        : /^the namespace /.test(why)
          ? DNS_REASONS[2]
          : /^the third part /.test(why)
            ? DNS_REASONS[3]
            : /^the cluster domain /.test(why)
              ? DNS_REASONS[4]
              : undefined;
  return reason === undefined
    ? `virtualToHostDNS expects a string of the form ${DNS_FORM}, e.g. my-svc.default.svc`
    : dnsMessage(reason);
}

interface Node {
  type: string;
  [key: string]: unknown;
}

/**
 * The names and literals written in a source: identifiers, property names, string literals and
 * template text. Text equal to one of them is the config author's, not data.
 */
export function sourceNames(root: unknown): Set<string> {
  const names = new Set<string>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    if (node.type === 'Identifier' || node.type === 'PrivateIdentifier') {
      names.add(node['name'] as string);
    } else if (node.type === 'Literal' && typeof node['value'] === 'string') {
      names.add(node['value']);
    } else if (node.type === 'TemplateElement') {
      const cooked = (node['value'] as { cooked: string | null }).cooked;
      if (cooked !== null) names.add(cooked);
    }
    for (const key in node) {
      const child = node[key];
      if (Array.isArray(child)) {
        for (const c of child) if (isNode(c)) stack.push(c);
      } else if (isNode(child)) stack.push(child);
    }
  }
  names.delete('');
  return names;
}

function isNode(x: unknown): x is Node {
  return typeof x === 'object' && x !== null && typeof (x as { type?: unknown }).type === 'string';
}
