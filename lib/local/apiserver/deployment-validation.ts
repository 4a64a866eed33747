/**
 * Defaulting and validation of `apps/v1` Deployments, as far as a cluster that runs no Pods needs
 * them: the defaults a real server adds (replicas, strategy, history limit, progress deadline,
 * Pod template defaults) so `kubectl diff` and `apply` see what a cluster would store, and the
 * rules users hit first (selector required and matching the template's labels, containers with
 * name and image).
 */
import { type FieldError, fieldErr } from './errors.ts';
import { asObj } from './object-meta.ts';
import { parseLabelSelector } from './selectors.ts';
import { matchesSelectors } from './watch-hub.ts';

type Obj = Record<string, unknown>;

function ensure(parent: Obj, key: string): Obj {
  const v = asObj(parent[key]) ?? {};
  parent[key] = v;
  return v;
}

/** Whether an image reference has no tag or `:latest` (the kubelet then pulls Always). */
function latest(image: string): boolean {
  const name = image.split('@')[0] ?? '';
  const tag =
    name.lastIndexOf(':') > name.lastIndexOf('/') ? name.slice(name.lastIndexOf(':') + 1) : '';
  return !image.includes('@') && (tag === '' || tag === 'latest');
}

/** The Pod spec defaults a server adds to a template (`SetDefaults_PodSpec`, containers). */
export function defaultPodSpec(spec: Obj): void {
  if (!spec.restartPolicy) spec.restartPolicy = 'Always';
  if (!spec.dnsPolicy) spec.dnsPolicy = 'ClusterFirst';
  if (!spec.schedulerName) spec.schedulerName = 'default-scheduler';
  if (spec.terminationGracePeriodSeconds === undefined) spec.terminationGracePeriodSeconds = 30;
  if (!spec.securityContext) spec.securityContext = {};
  for (const c of Array.isArray(spec.containers) ? spec.containers : []) {
    const container = asObj(c);
    if (!container) continue;
    if (!container.terminationMessagePath)
      container.terminationMessagePath = '/dev/termination-log';
    if (!container.terminationMessagePolicy) container.terminationMessagePolicy = 'File';
    if (!container.imagePullPolicy && typeof container.image === 'string')
      container.imagePullPolicy = latest(container.image) ? 'Always' : 'IfNotPresent';
  }
}

/** `SetDefaults_Deployment` and the template's Pod defaults. */
export function defaultDeployment(obj: Obj): void {
  const spec = ensure(obj, 'spec');
  if (spec.replicas === undefined) spec.replicas = 1;
  const strategy = ensure(spec, 'strategy');
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = ensure(strategy, 'rollingUpdate');
    if (ru.maxUnavailable === undefined) ru.maxUnavailable = '25%';
    if (ru.maxSurge === undefined) ru.maxSurge = '25%';
  }
  if (spec.revisionHistoryLimit === undefined) spec.revisionHistoryLimit = 10;
  if (spec.progressDeadlineSeconds === undefined) spec.progressDeadlineSeconds = 600;
  const template = ensure(spec, 'template');
  defaultPodSpec(ensure(template, 'spec'));
  if (!obj.status) obj.status = {};
}

/** `ValidateDeployment`, the rules a manifest author meets first. */
export function validateDeployment(obj: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec = asObj(obj.spec) ?? {};
  const selector = asObj(spec.selector);
  const template = asObj(spec.template) ?? {};
  const labels = (asObj(asObj(template.metadata)?.labels) ?? {}) as Record<string, string>;
  if (!selector) {
    errs.push(fieldErr.required('spec.selector'));
  } else {
    const matchLabels = (asObj(selector.matchLabels) ?? {}) as Record<string, string>;
    const text = Object.entries(matchLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const hasExpressions = Array.isArray(selector.matchExpressions);
    if (!text && !hasExpressions) {
      errs.push(
        fieldErr.invalid('spec.selector', selector, 'empty selector is invalid for deployment'),
      );
    } else if (text) {
      let matches = false;
      try {
        matches = matchesSelectors({ metadata: { labels } }, parseLabelSelector(text), undefined);
      } catch {
        errs.push(
          fieldErr.invalid('spec.selector.matchLabels', matchLabels, 'invalid label selector'),
        );
      }
      if (!matches)
        errs.push(
          fieldErr.invalid(
            'spec.template.metadata.labels',
            labels,
            '`selector` does not match template `labels`',
          ),
        );
    }
  }
  const podSpec = asObj(template.spec) ?? {};
  const containers = Array.isArray(podSpec.containers) ? podSpec.containers : [];
  if (containers.length === 0) errs.push(fieldErr.required('spec.template.spec.containers'));
  containers.forEach((c, i) => {
    const container = asObj(c) ?? {};
    if (!container.name) errs.push(fieldErr.required(`spec.template.spec.containers[${i}].name`));
    if (!container.image) errs.push(fieldErr.required(`spec.template.spec.containers[${i}].image`));
  });
  if (typeof spec.replicas === 'number' && spec.replicas < 0)
    errs.push(
      fieldErr.invalid('spec.replicas', spec.replicas, 'must be greater than or equal to 0'),
    );
  return errs;
}
