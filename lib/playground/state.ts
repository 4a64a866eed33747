/**
 * What the playground page sends (its editors) and gets back (diagnostics, the rendered object,
 * the patch report), as plain data checked at the server's door.
 */

/** The editors' contents: everything `render` reads from files and flags. */
export interface PlaygroundState {
  /** The configuration file's text. */
  config: string;
  /** toHost: the virtual object; fromHost: the host copy (YAML or JSON). */
  object: string;
  /** toHost: the object's Service; fromHost: the current virtual object. Empty: none. */
  companion: string;
  direction: 'toHost' | 'fromHost';
  /** The virtual cluster's name, host namespace and marker domain (empty: the defaults). */
  name: string;
  namespace: string;
  markerDomain: string;
}

/** Which editor a problem belongs to. */
export type Editor = 'config' | 'object' | 'companion';

/** A finding placed in an editor (1-based line and column, as `validate` prints them). */
export interface Problem {
  editor: Editor;
  severity: 'error' | 'warning';
  line: number;
  column: number;
  message: string;
  /** The configuration path it concerns (configuration findings only). */
  configPath?: string;
  /** The finding as `validate` prints it (`file:line:col: severity: message (path)`). */
  text: string;
}

/** One patch's outcome, as one line of `render --explain`. */
export interface OutcomeLine {
  direction: string;
  status: 'applied' | 'skipped' | 'failed';
  configPath: string;
  path: string;
  text: string;
}

/** What the page shows for one state. */
export interface Evaluation {
  problems: Problem[];
  /** The rendered object as `render` prints it, and the lines that differ from the input. */
  result?: { yaml: string; changedLines: number[] };
  /** The outcome as the sync names it (absent when nothing could be rendered). */
  status?: string;
  reasonCode?: string;
  /** `render`'s `error:` lines: failed patches, or why the object would not be synced. */
  failures: string[];
  /** Exactly what `render --explain` prints. */
  explain: string;
  outcomes: OutcomeLine[];
}

/** Longest text accepted in each editor (the configuration loader's own bound is 1 MiB). */
export const MAX_EDITOR_CHARS = 1024 * 1024;

/** Longest identity field (a Kubernetes name or DNS subdomain is far shorter). */
const MAX_IDENTITY_CHARS = 253;

/** A request body as a state, or the message of why it is not one. */
export function parseState(body: unknown): PlaygroundState | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return 'the body must be a JSON object with config, object, companion and direction';
  }
  const record = body as Record<string, unknown>;
  const text = (field: string, max: number): string | undefined => {
    const value = record[field] ?? '';
    return typeof value === 'string' && value.length <= max ? value : undefined;
  };
  const config = text('config', MAX_EDITOR_CHARS);
  const object = text('object', MAX_EDITOR_CHARS);
  const companion = text('companion', MAX_EDITOR_CHARS);
  const name = text('name', MAX_IDENTITY_CHARS);
  const namespace = text('namespace', MAX_IDENTITY_CHARS);
  const markerDomain = text('markerDomain', MAX_IDENTITY_CHARS);
  const direction = record['direction'] ?? 'toHost';
  if (direction !== 'toHost' && direction !== 'fromHost') {
    return 'direction must be toHost or fromHost';
  }
  if (
    config === undefined ||
    object === undefined ||
    companion === undefined ||
    name === undefined ||
    namespace === undefined ||
    markerDomain === undefined
  ) {
    return `config, object and companion must be strings of at most ${MAX_EDITOR_CHARS} characters, name, namespace and markerDomain of at most ${MAX_IDENTITY_CHARS}`;
  }
  return { config, object, companion, direction, name, namespace, markerDomain };
}
