/**
 * Validation of `rbac.authorization.k8s.io/v1` Roles, ClusterRoles and their bindings, the rules
 * a manifest author meets first: every rule names verbs and what it applies to, a binding's `roleRef` names a Role or
 * ClusterRole (a RoleBinding either, a ClusterRoleBinding only a ClusterRole) and cannot change,
 * subjects have a kind and a name. The emulator does not authorize: these objects are stored so
 * that manifests and `kubectl apply` behave as on a cluster.
 */
import { type FieldError, fieldErr } from './errors.ts';

type Obj = Record<string, unknown>;

function list(v: unknown): Obj[] {
  return Array.isArray(v) ? v.map((e) => (e && typeof e === 'object' ? (e as Obj) : {})) : [];
}

function count(v: unknown): number {
  return Array.isArray(v) ? v.length : 0;
}

/**
 * `ValidateRole` / `ValidateClusterRole` (`namespaced`: a Role): a rule names non-resource URLs
 * (a ClusterRole's only, and then no API groups, resources or names) or at least one API group
 * and one resource. That every rule needs verbs is checked declaratively in 1.37, so it is
 * reported last and without a detail.
 */
export function validateRules(obj: Obj, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const declarative: FieldError[] = [];
  list(obj.rules).forEach((rule, i) => {
    const p = `rules[${i}]`;
    if (count(rule.verbs) === 0) declarative.push(fieldErr.required(`${p}.verbs`));
    if (count(rule.nonResourceURLs) > 0) {
      if (namespaced) {
        errs.push(
          fieldErr.invalid(
            `${p}.nonResourceURLs`,
            rule.nonResourceURLs,
            'namespaced rules cannot apply to non-resource URLs',
          ),
        );
      }
      if (count(rule.apiGroups) + count(rule.resources) + count(rule.resourceNames) > 0) {
        errs.push(
          fieldErr.invalid(
            `${p}.nonResourceURLs`,
            rule.nonResourceURLs,
            'rules cannot apply to both regular resources and non-resource URLs',
          ),
        );
      }
      return;
    }
    if (count(rule.apiGroups) === 0)
      errs.push(
        fieldErr.required(`${p}.apiGroups`, 'resource rules must supply at least one api group'),
      );
    if (count(rule.resources) === 0)
      errs.push(
        fieldErr.required(`${p}.resources`, 'resource rules must supply at least one resource'),
      );
  });
  return [...errs, ...declarative];
}

/** `ValidateRoleBinding` / `ValidateClusterRoleBinding`. */
export function validateBinding(kind: string, obj: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const ref = (obj.roleRef && typeof obj.roleRef === 'object' ? obj.roleRef : {}) as Obj;
  const kinds = kind === 'RoleBinding' ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (ref.apiGroup !== 'rbac.authorization.k8s.io')
    errs.push(
      fieldErr.notSupported('roleRef.apiGroup', ref.apiGroup ?? '', ['rbac.authorization.k8s.io']),
    );
  if (!kinds.includes(String(ref.kind ?? '')))
    errs.push(fieldErr.notSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) errs.push(fieldErr.required('roleRef.name'));
  list(obj.subjects).forEach((s, i) => {
    if (!s.name) errs.push(fieldErr.required(`subjects[${i}].name`));
    if (!['ServiceAccount', 'User', 'Group'].includes(String(s.kind ?? '')))
      errs.push(
        fieldErr.notSupported(`subjects[${i}].kind`, s.kind ?? '', [
          'ServiceAccount',
          'User',
          'Group',
        ]),
      );
    if (s.kind === 'ServiceAccount' && !s.namespace && kind === 'ClusterRoleBinding')
      errs.push(fieldErr.required(`subjects[${i}].namespace`));
  });
  return errs;
}

/** A binding's `roleRef` cannot change. */
export function validateBindingUpdate(oldObj: Obj, newObj: Obj): FieldError[] {
  const a = (oldObj.roleRef ?? {}) as Obj;
  const b = (newObj.roleRef ?? {}) as Obj;
  return a.apiGroup === b.apiGroup && a.kind === b.kind && a.name === b.name
    ? []
    : [fieldErr.invalid('roleRef', newObj.roleRef, 'cannot change roleRef')];
}
