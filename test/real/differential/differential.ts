/**
 * Runs a request sequence (sequences.ts) against one API server and normalises every answer, so
 * that the emulator's and a real kube-apiserver's answers to the same sequence can be compared
 * with `toEqual`. What a server may choose freely is replaced by a placeholder: uids and object
 * resourceVersions by their order of first appearance within the sequence (so that "the same
 * version again" and "a new version" stay visible), timestamps, continue tokens, a list's
 * resourceVersion, and a Service's allocated IPs.
 */
import type { Target } from '../../fidelity/target.ts';
import type { RequestStep, Sequence, Step } from './sequences.ts';

/** One normalised answer. */
export interface Answer {
  status: number;
  /** The `Warning` headers, as the server sent them. */
  warning?: string;
  body?: unknown;
  /** A watch step's events. */
  events?: unknown[];
}

type Raw = Pick<Target, 'request' | 'watch'>;

/** A uid as the API server makes them. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Per-sequence maps of volatile values to stable placeholders. */
class Normaliser {
  readonly #uids = new Map<string, string>();
  readonly #versions = new Map<string, string>();

  uid(value: string): string {
    if (!this.#uids.has(value)) this.#uids.set(value, `<uid ${this.#uids.size}>`);
    return this.#uids.get(value)!;
  }

  version(value: string): string {
    if (!this.#versions.has(value)) this.#versions.set(value, `<rv ${this.#versions.size}>`);
    return this.#versions.get(value)!;
  }

  /** A deep copy of `value` with every volatile field replaced. */
  value(value: unknown, key = '', parent = ''): unknown {
    if (Array.isArray(value)) return value.map((v) => this.value(v, '', key));
    if (value === null || typeof value !== 'object') {
      if (typeof value !== 'string') return value;
      if (key === 'uid') return this.uid(value);
      if (key === 'resourceVersion') return parent === 'list' ? '<list rv>' : this.version(value);
      if (key === 'creationTimestamp' || key === 'deletionTimestamp' || key === 'time') {
        return '<time>';
      }
      if (key === 'continue') return value === '' ? '' : '<continue>';
      // A message may quote a uid (a failed precondition names the stored one).
      if (key === 'message') return value.replace(UUID, (uid) => this.uid(uid));
      if (key === 'clusterIP' || key === 'clusterIPs') return '<ip>';
      return value;
    }
    const out: Record<string, unknown> = {};
    const isList =
      typeof (value as { kind?: unknown }).kind === 'string' &&
      String((value as { kind: string }).kind).endsWith('List');
    for (const [k, v] of Object.entries(value)) {
      // A list's metadata carries the list's resourceVersion: the store's, moved by anything.
      const childParent = k === 'metadata' && isList ? 'list' : key;
      out[k] = this.value(v, k, childParent);
    }
    return out;
  }
}

/** The `{rv:N}`, `{uid:N}`, `{continue}` and `{ns}` placeholders of a step, filled in. */
function fill(text: string, ns: string, objects: unknown[], lastContinue: string): string {
  return text
    .replaceAll('{ns}', ns)
    .replaceAll('{continue}', encodeURIComponent(lastContinue))
    .replace(/\{(rv|uid):(\d+)\}/g, (_m, what: string, n: string) => {
      const meta = (objects[Number(n)] as { metadata?: Record<string, string> } | undefined)
        ?.metadata;
      return (what === 'rv' ? meta?.resourceVersion : meta?.uid) ?? `(no ${what} in step ${n})`;
    });
}

function isWatch(step: Step): step is { watch: string; events: number } {
  return 'watch' in step;
}

/**
 * Runs `sequence` in namespace `ns` (created first, not part of the answers) and returns one
 * normalised answer per step.
 */
export async function runSequence(raw: Raw, sequence: Sequence, ns: string): Promise<Answer[]> {
  const created = await raw.request('POST', '/api/v1/namespaces', { metadata: { name: ns } });
  if (created.status !== 201) throw new Error(`namespace ${ns}: HTTP ${created.status}`);
  const norm = new Normaliser();
  const objects: unknown[] = [];
  const answers: Answer[] = [];
  let lastContinue = '';
  for (const step of sequence.steps) {
    if (isWatch(step)) {
      const w = await raw.watch(fill(step.watch, ns, objects, lastContinue));
      const events: unknown[] = [];
      try {
        while (events.length < step.events) {
          const e = await w.next(3_000).catch(() => undefined);
          if (!e) break;
          events.push(e);
        }
      } finally {
        w.close();
      }
      objects.push(undefined);
      answers.push({ status: w.status, events: events.map((e) => norm.value(e)) });
      continue;
    }
    const request = step as RequestStep;
    const body =
      request.body === undefined
        ? undefined
        : typeof request.body === 'string'
          ? request.body
          : JSON.parse(fill(JSON.stringify(request.body), ns, objects, lastContinue));
    const answer = await raw.request(
      request.method,
      fill(request.path, ns, objects, lastContinue),
      body,
      request.contentType,
    );
    objects.push(answer.body);
    const next = (answer.body as { metadata?: { continue?: string } } | undefined)?.metadata
      ?.continue;
    if (typeof next === 'string' && next !== '') lastContinue = next;
    const warning = answer.headers['warning'];
    answers.push({
      status: answer.status,
      ...(warning ? { warning: String(warning) } : {}),
      body: norm.value(answer.body),
    });
  }
  await raw.request('DELETE', `/api/v1/namespaces/${ns}`);
  return answers;
}
