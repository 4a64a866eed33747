/**
 * Label and field selectors with the grammar of `k8s.io/apimachinery/pkg/labels` and `fields`:
 * `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<1`, comma = AND.
 * Parse errors are {@link SelectorError}s, answered as 400 BadRequest.
 */
import { isQualifiedName, isValidLabelValue } from './names.ts';
import type { ResourceType } from './resources.ts';

/** A selector string the server cannot parse or does not support. */
export class SelectorError extends Error {
  override name = 'SelectorError';
}

type Op = 'exists' | '!' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';

interface Requirement {
  key: string;
  op: Op;
  values: string[];
}

/** A parsed label selector: matches a label map. */
export interface LabelSelector {
  readonly empty: boolean;
  matches(labels: Record<string, string> | undefined): boolean;
}

type Tok = { t: 'id'; v: string } | { t: 'op'; v: string } | { t: '(' | ')' | ',' | 'end' };

function lex(src: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  const special = ' \t\n\r,()=!<>';
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '(' || c === ')' || c === ',') {
      toks.push({ t: c });
      i++;
    } else if (c === '=' || c === '!' || c === '<' || c === '>') {
      const two = src.slice(i, i + 2);
      if (two === '==' || two === '!=') {
        toks.push({ t: 'op', v: two });
        i += 2;
      } else {
        toks.push({ t: 'op', v: c });
        i++;
      }
    } else {
      let j = i;
      while (j < src.length && !special.includes(src[j]!)) j++;
      toks.push({ t: 'id', v: src.slice(i, j) });
      i = j;
    }
  }
  toks.push({ t: 'end' });
  return toks;
}

function tokText(t: Tok): string {
  return t.t === 'id' || t.t === 'op' ? t.v : t.t === 'end' ? '' : t.t;
}

/** Parses a label selector; throws {@link SelectorError} with apimachinery-like messages. */
export function parseLabelSelector(src: string): LabelSelector {
  const toks = lex(src);
  let pos = 0;
  const peek = () => toks[pos]!;
  const next = () => toks[pos++]!;
  const fail = (found: Tok, expected: string): never => {
    throw new SelectorError(
      `unable to parse requirement: found '${tokText(found)}', expected: ${expected}`,
    );
  };
  const checkKey = (k: string) => {
    const errs = isQualifiedName(k);
    if (errs.length > 0)
      throw new SelectorError(
        `unable to parse requirement: key: Invalid value: "${k}": ${errs.join('; ')}`,
      );
  };
  const checkValue = (v: string) => {
    const errs = isValidLabelValue(v);
    if (errs.length > 0)
      throw new SelectorError(
        `unable to parse requirement: values[0][${v}]: Invalid value: "${v}": ${errs.join('; ')}`,
      );
  };
  const reqs: Requirement[] = [];
  for (;;) {
    // apimachinery's parse loop: a requirement starts with a key or `!`; the end of the string
    // may come here too (so a trailing comma is accepted); anything else is refused as is, not
    // as a requirement.
    const head = peek();
    if (head.t === 'end') break;
    if (head.t !== 'id' && !(head.t === 'op' && head.v === '!')) {
      throw new SelectorError(
        `found '${tokText(head)}', expected: !, identifier, or 'end of string'`,
      );
    }
    let tok = next();
    if (tok.t === 'op' && tok.v === '!') {
      const k = next();
      if (k.t !== 'id') fail(k, "identifier after '!'");
      const key = (k as { v: string }).v;
      checkKey(key);
      reqs.push({ key, op: '!', values: [] });
    } else {
      if (tok.t !== 'id') fail(tok, 'identifier');
      const key = (tok as { v: string }).v;
      checkKey(key);
      const opTok = peek();
      if (opTok.t === ',' || opTok.t === 'end') {
        reqs.push({ key, op: 'exists', values: [] });
      } else {
        pos++;
        let op: Op;
        if (opTok.t === 'op') {
          op =
            opTok.v === '=' || opTok.v === '=='
              ? '='
              : opTok.v === '!='
                ? '!='
                : opTok.v === '>'
                  ? 'gt'
                  : opTok.v === '<'
                    ? 'lt'
                    : fail(opTok, '=, !=, ==, in, notin, >, <');
        } else if (opTok.t === 'id' && (opTok.v === 'in' || opTok.v === 'notin')) {
          op = opTok.v;
        } else {
          return fail(opTok, '=, !=, ==, in, notin, >, <');
        }
        if (op === 'in' || op === 'notin') {
          const open = next();
          if (open.t !== '(') fail(open, "'('");
          const values: string[] = [];
          for (;;) {
            const v = peek();
            if (v.t === 'id') {
              checkValue(v.v);
              values.push(v.v);
              pos++;
            } else if (v.t === ',' || v.t === ')') {
              // An empty element (`(a,)`) is an empty value, as in apimachinery.
              if (values.length === 0 || toks[pos - 1]?.t === ',') values.push('');
            } else {
              fail(v, "',' or ')'");
            }
            const sep = next();
            if (sep.t === ')') break;
            if (sep.t !== ',') fail(sep, "',' or ')'");
          }
          reqs.push({ key, op, values: [...new Set(values)] });
        } else {
          const v = peek();
          let value = '';
          if (v.t === 'id') {
            value = v.v;
            pos++;
          } else if (v.t !== ',' && v.t !== 'end') {
            fail(v, 'identifier');
          }
          if (op === 'gt' || op === 'lt') {
            if (!/^-?\d+$/.test(value))
              throw new SelectorError(
                `unable to parse requirement: values[0]: Invalid value: "${value}": for 'Gt', 'Lt' operators, the value must be an integer`,
              );
          } else {
            checkValue(value);
          }
          reqs.push({ key, op, values: [value] });
        }
      }
    }
    tok = next();
    if (tok.t === 'end') break;
    if (tok.t !== ',') fail(tok, "',' or 'end of string'");
  }
  return build(reqs);
}

function build(reqs: Requirement[]): LabelSelector {
  return {
    empty: reqs.length === 0,
    matches(labels) {
      const l = labels ?? {};
      for (const r of reqs) {
        const has = Object.hasOwn(l, r.key);
        const v = has ? l[r.key] : undefined;
        switch (r.op) {
          case 'exists':
            if (!has) return false;
            break;
          case '!':
            if (has) return false;
            break;
          case '=':
            if (!has || v !== r.values[0]) return false;
            break;
          case 'in':
            if (!has || !r.values.includes(v!)) return false;
            break;
          case '!=':
            if (has && v === r.values[0]) return false;
            break;
          case 'notin':
            if (has && r.values.includes(v!)) return false;
            break;
          case 'gt':
          case 'lt': {
            if (!has || !/^-?\d+$/.test(v!)) return false;
            const n = Number(v);
            const ref = Number(r.values[0]);
            if (r.op === 'gt' ? !(n > ref) : !(n < ref)) return false;
            break;
          }
        }
      }
      return true;
    },
  };
}

/** A parsed field selector bound to a resource type. */
export interface FieldSelector {
  readonly empty: boolean;
  /** The `metadata.name` it pins, when it pins one (`metadata.name=x`). */
  readonly name?: string;
  /** The `metadata.namespace` it pins, when it pins one. */
  readonly namespace?: string;
  matches(obj: Record<string, unknown>): boolean;
}

function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === sep) {
      out.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  out.push(cur);
  return out;
}

function unescapeValue(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/** Parses a field selector for resource `r`; throws {@link SelectorError} on bad syntax or fields. */
export function parseFieldSelector(src: string, r: ResourceType): FieldSelector {
  const terms: { field: string; neq: boolean; value: string }[] = [];
  if (src.trim() !== '') {
    for (const part of splitUnescaped(src, ',')) {
      const m = /^(.*?)(==|!=|=)(.*)$/s.exec(part);
      if (!m) throw new SelectorError(`invalid selector: '${src}'; can't understand '${part}'`);
      const field = m[1]!.trim();
      terms.push({ field, neq: m[2] === '!=', value: unescapeValue(m[3]!) });
    }
  }
  const getters: ((o: Record<string, unknown>) => string)[] = [];
  for (const term of terms) {
    if (term.field === 'metadata.name' || term.field === 'metadata.namespace') {
      const k = term.field === 'metadata.name' ? 'name' : 'namespace';
      getters.push((o) => String((o.metadata as Record<string, unknown> | undefined)?.[k] ?? ''));
    } else if (Object.hasOwn(r.extraFields, term.field)) {
      // hasOwn: `__proto__` or `toString` must not find Object.prototype's members.
      getters.push(r.extraFields[term.field]!);
    } else if (Object.keys(r.extraFields).length > 0) {
      throw new SelectorError(`field label not supported: ${term.field}`);
    } else {
      throw new SelectorError(
        `"${term.field}" is not a known field selector: only "metadata.name", "metadata.namespace"`,
      );
    }
  }
  const pin = (f: string) => terms.find((t) => t.field === f && !t.neq)?.value;
  const sel: FieldSelector = {
    empty: terms.length === 0,
    matches(obj) {
      for (let i = 0; i < terms.length; i++) {
        const t = terms[i]!;
        const v = getters[i]!(obj);
        if (t.neq ? v === t.value : v !== t.value) return false;
      }
      return true;
    },
  };
  const name = pin('metadata.name');
  const namespace = pin('metadata.namespace');
  return {
    ...sel,
    ...(name !== undefined ? { name } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
  };
}

/**
 * A `metav1.LabelSelector` (`matchLabels`, `matchExpressions`) as the selector string
 * kube-apiserver prints (`LabelSelectorAsSelector(...).String()`): one requirement per label or
 * expression, sorted by key, values of `in`/`notin` sorted. Used for a Scale's
 * `status.selector`.
 */
export function labelSelectorString(selector: Record<string, unknown>): string {
  const reqs: [string, string][] = [];
  const matchLabels = selector.matchLabels;
  if (matchLabels !== null && typeof matchLabels === 'object') {
    for (const [k, v] of Object.entries(matchLabels)) reqs.push([k, `${k}=${String(v)}`]);
  }
  const exprs = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  for (const e of exprs) {
    if (e === null || typeof e !== 'object') continue;
    const { key, operator, values } = e as Record<string, unknown>;
    const k = String(key ?? '');
    const vs = (Array.isArray(values) ? values.map(String) : []).sort();
    if (operator === 'In') reqs.push([k, `${k} in (${vs.join(',')})`]);
    else if (operator === 'NotIn') reqs.push([k, `${k} notin (${vs.join(',')})`]);
    else if (operator === 'Exists') reqs.push([k, k]);
    else if (operator === 'DoesNotExist') reqs.push([k, `!${k}`]);
  }
  reqs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return reqs.map(([, s]) => s).join(',');
}
