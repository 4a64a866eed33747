/**
 * The editors' state of the shipped example (the configuration, the db Endpoints and its
 * Service), as `endpoint-sync playground` opens by default; the playground's tests start from it.
 */
import { readFileSync } from 'node:fs';
import type { PlaygroundState } from '../../lib/playground/index.ts';

const root = new URL('../../', import.meta.url);

/** A file of the repository, as text. */
export function repositoryFile(path: string): string {
  return readFileSync(new URL(path, root), 'utf8');
}

/** The example's state, with `overrides` on top. */
export function exampleState(overrides: Partial<PlaygroundState> = {}): PlaygroundState {
  return {
    config: repositoryFile('examples/endpoints.yaml'),
    object: repositoryFile('examples/objects/db-endpoints.yaml'),
    companion: repositoryFile('examples/objects/db-service.yaml'),
    direction: 'toHost',
    name: '',
    namespace: '',
    markerDomain: '',
    ...overrides,
  };
}
