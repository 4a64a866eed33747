/**
 * The create-only review kinds kubectl's `auth can-i` and `auth whoami` send:
 * SelfSubjectAccessReview (answered "allowed": the emulator authorizes nothing, so everything is
 * allowed, and the reason says so) and SelfSubjectReview (the user every token is taken for).
 * Nothing is stored, as on a real server.
 */
import { fieldErr, invalid } from './errors.ts';
import { asObj } from './object-meta.ts';
import { apiVersionOf, type ResourceType } from './resources.ts';

type Obj = Record<string, unknown>;

/** The user the emulator takes every token for (it does not authenticate). */
export const EMULATED_USER = {
  username: 'emulator-admin',
  groups: ['system:masters', 'system:authenticated'],
};

/** The answer to a review `body` (already decoded as kind `r`); 422 for a malformed review. */
export function answerReview(r: ResourceType, body: Obj): Obj {
  const head = { kind: r.kind, apiVersion: apiVersionOf(r), metadata: { creationTimestamp: null } };
  if (r.kind === 'SelfSubjectReview') return { ...head, status: { userInfo: EMULATED_USER } };
  const spec = asObj(body.spec) ?? {};
  const resource = asObj(spec.resourceAttributes);
  const nonResource = asObj(spec.nonResourceAttributes);
  if (!resource === !nonResource) {
    throw invalid({ group: r.group, kind: r.kind }, '', [
      fieldErr.required(
        'spec.resourceAttributes',
        'exactly one of nonResourceAttributes or resourceAttributes must be specified',
      ),
    ]);
  }
  return {
    ...head,
    spec,
    status: {
      allowed: true,
      reason: 'the emulator does not authorize requests: every request is allowed',
    },
  };
}
