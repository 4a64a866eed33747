/**
 * The `Table` form of lists, gets and watch events (`Accept: application/json;as=Table;
 * g=meta.k8s.io;v=v1`), which `kubectl get` asks for: the columns kube-apiserver's printers give
 * each served kind (Endpoints addresses, Service type/cluster IP/ports, Namespace status, ...),
 * with the wide ones at priority 1 for `-o wide`, ages worded like kubectl's, and each row's
 * object as PartialObjectMetadata (or whole, or none, by `includeObject`).
 */
import { isIP } from 'node:net';
import { badRequest } from './errors.ts';
import { asObj } from './object-meta.ts';
import type { ResourceType } from './resources.ts';

type Obj = Record<string, unknown>;

/** What a row carries besides its cells (`includeObject`). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** The Table version a request asks for, or undefined when it does not ask for a Table. */
export function tableRequested(accept: string | undefined): 'v1' | 'v1beta1' | undefined {
  if (!accept) return undefined;
  for (const entry of accept.split(',')) {
    const [type, ...params] = entry.split(';').map((p) => p.trim());
    if (type !== 'application/json') continue;
    const p = new Map(params.map((x) => x.split('=').map((s) => s.trim()) as [string, string]));
    if (p.get('as') !== 'Table') return undefined;
    if (p.get('g') !== 'meta.k8s.io') continue;
    const v = p.get('v');
    if (v === 'v1' || v === 'v1beta1') return v;
  }
  return undefined;
}

/** `includeObject` as the real server parses it (default Metadata; anything else is 400). */
export function includeObjectParam(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  if (v === null || v === '' || v === 'Metadata') return 'Metadata';
  if (v === 'None' || v === 'Object') return v;
  throw badRequest(
    `includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`,
  );
}

interface Column {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

const col = (
  name: string,
  description: string,
  priority = 0,
  type = 'string',
  format = '',
): Column => ({
  name,
  type,
  format,
  description,
  priority,
});

const NAME = col(
  'Name',
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically.',
  0,
  'string',
  'name',
);
const AGE = col(
  'Age',
  'CreationTimestamp is a timestamp representing the server time when this object was created.',
);

/** `v` when it is a JSON object, else an empty one: a table cell of a missing field is empty. */
function objOrEmpty(v: unknown): Obj {
  return asObj(v) ?? {};
}

function asList(v: unknown): Obj[] {
  return Array.isArray(v) ? v.map(objOrEmpty) : [];
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

/** kubectl's `HumanDuration`. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8)
    return hours % 24 === 0 ? `${hours / 24}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 2) return `${days}d`;
  if (hours < 24 * 365 * 8)
    return days % 365 === 0
      ? `${Math.floor(days / 365)}y`
      : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

function age(ts: unknown, now: Date): string {
  const t = Date.parse(str(ts));
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now.getTime() - t);
}

function labelsText(m: unknown): string {
  const entries = Object.entries(objOrEmpty(m)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? '<none>' : entries.map(([k, v]) => `${k}=${str(v)}`).join(',');
}

function hostPort(ip: string, port: unknown): string {
  return isIP(ip) === 6 ? `[${ip}]:${str(port)}` : `${ip}:${str(port)}`;
}

/** `formatEndpoints`: at most three `ip:port`, then `+ N more...`. */
function endpointsText(o: Obj): string {
  const subsets = asList(o.subsets);
  if (subsets.length === 0) return '<none>';
  const list: string[] = [];
  let count = 0;
  for (const ss of subsets) {
    const addresses = asList(ss.addresses);
    const ports = asList(ss.ports);
    for (const port of ports.length === 0 ? [undefined] : ports) {
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === 3) break;
        list.push(port ? hostPort(str(a.ip), port.port) : str(a.ip));
      }
    }
  }
  return count > 3 ? `${list.join(',')} + ${count - 3} more...` : list.join(',');
}

function servicePorts(spec: Obj): string {
  const ports = asList(spec.ports);
  if (ports.length === 0) return '<none>';
  return ports
    .map((p) => `${str(p.port)}${p.nodePort ? `:${str(p.nodePort)}` : ''}/${str(p.protocol)}`)
    .join(',');
}

function serviceExternalIP(spec: Obj, status: Obj): string {
  const type = str(spec.type);
  const external = (spec.externalIPs as string[] | undefined) ?? [];
  if (type === 'ExternalName') return str(spec.externalName);
  if (type === 'LoadBalancer') {
    const ingress = asList(objOrEmpty(status.loadBalancer).ingress).map((i) =>
      str(i.ip || i.hostname),
    );
    const all = [...ingress, ...external];
    return all.length > 0 ? all.join(',') : '<pending>';
  }
  return external.length > 0 ? external.join(',') : '<none>';
}

function sliceEndpoints(o: Obj): string {
  const addresses = asList(o.endpoints).flatMap((e) => (e.addresses as string[] | undefined) ?? []);
  if (addresses.length === 0) return '<none>';
  const shown = addresses.slice(0, 3).join(',');
  return addresses.length > 3 ? `${shown} + ${addresses.length - 3} more...` : shown;
}

function slicePorts(o: Obj): string {
  const ports = asList(o.ports);
  if (ports.length === 0) return '<unset>';
  return ports.map((p) => (p.port === undefined ? '<unset>' : str(p.port))).join(',');
}

function subjects(o: Obj, kind: string): string {
  const names = asList(o.subjects)
    .filter((s) => s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${str(s.namespace)}/${str(s.name)}` : str(s.name)));
  return names.join(', ');
}

interface Printer {
  columns: Column[];
  cells(o: Obj, now: Date): unknown[];
}

const createdAt = col(
  'Created At',
  'CreationTimestamp is a timestamp representing the server time when this object was created.',
  0,
  'date',
);
const bindingColumns = [
  NAME,
  col('Role', 'Role is the role this binding refers to.'),
  AGE,
  col('Users', 'Users in the roleBinding', 1),
  col('Groups', 'Groups in the roleBinding', 1),
  col('ServiceAccounts', 'ServiceAccounts in the roleBinding', 1),
];
const bindingCells = (o: Obj, now: Date) => {
  const meta = objOrEmpty(o.metadata);
  const ref = objOrEmpty(o.roleRef);
  return [
    meta.name,
    `${str(ref.kind)}/${str(ref.name)}`,
    age(meta.creationTimestamp, now),
    subjects(o, 'User'),
    subjects(o, 'Group'),
    subjects(o, 'ServiceAccount'),
  ];
};

/** The printers of kube-apiserver for the served kinds (pkg/printers: column names and order). */
const PRINTERS: Record<string, Printer> = {
  Namespace: {
    columns: [NAME, col('Status', 'The status of the namespace'), AGE],
    cells: (o, now) => [
      objOrEmpty(o.metadata).name,
      str(objOrEmpty(o.status).phase),
      age(objOrEmpty(o.metadata).creationTimestamp, now),
    ],
  },
  Endpoints: {
    columns: [NAME, col('Endpoints', 'Endpoints is the list of endpoints.'), AGE],
    cells: (o, now) => [
      objOrEmpty(o.metadata).name,
      endpointsText(o),
      age(objOrEmpty(o.metadata).creationTimestamp, now),
    ],
  },
  EndpointSlice: {
    columns: [
      NAME,
      col('AddressType', 'The type of addresses in this EndpointSlice.'),
      col('Ports', 'The ports in this EndpointSlice.'),
      col('Endpoints', 'The endpoints in this EndpointSlice.'),
      AGE,
    ],
    cells: (o, now) => [
      objOrEmpty(o.metadata).name,
      str(o.addressType),
      slicePorts(o),
      sliceEndpoints(o),
      age(objOrEmpty(o.metadata).creationTimestamp, now),
    ],
  },
  Service: {
    columns: [
      NAME,
      col('Type', 'The type of the service.'),
      col('Cluster-IP', 'The cluster IP of the service.'),
      col('External-IP', 'The external IPs of the service.'),
      col('Port(s)', 'The ports of the service.'),
      AGE,
      col('Selector', 'The selector of the service.', 1),
    ],
    cells: (o, now) => {
      const spec = objOrEmpty(o.spec);
      return [
        objOrEmpty(o.metadata).name,
        str(spec.type),
        str(spec.clusterIP) || '<none>',
        serviceExternalIP(spec, objOrEmpty(o.status)),
        servicePorts(spec),
        age(objOrEmpty(o.metadata).creationTimestamp, now),
        labelsText(spec.selector),
      ];
    },
  },
  ConfigMap: {
    columns: [NAME, col('Data', 'The number of entries in the data.', 0, 'integer'), AGE],
    cells: (o, now) => [
      objOrEmpty(o.metadata).name,
      Object.keys(objOrEmpty(o.data)).length + Object.keys(objOrEmpty(o.binaryData)).length,
      age(objOrEmpty(o.metadata).creationTimestamp, now),
    ],
  },
  Secret: {
    columns: [
      NAME,
      col('Type', 'The type of the secret'),
      col('Data', 'The number of entries in the data', 0, 'integer'),
      AGE,
    ],
    cells: (o, now) => [
      objOrEmpty(o.metadata).name,
      str(o.type),
      Object.keys(objOrEmpty(o.data)).length,
      age(objOrEmpty(o.metadata).creationTimestamp, now),
    ],
  },
  Pod: {
    columns: [
      NAME,
      col('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
      col('Status', 'The aggregate status of the containers in this pod.'),
      col(
        'Restarts',
        'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
      ),
      AGE,
      col('IP', 'The IP address assigned to the pod.', 1),
      col('Node', 'The node the pod is assigned to.', 1),
      col('Nominated Node', 'The node that the pod is nominated to.', 1),
      col('Readiness Gates', 'The readiness gates of the pod.', 1),
    ],
    cells: (o, now) => {
      const spec = objOrEmpty(o.spec);
      const status = objOrEmpty(o.status);
      const ready = asList(status.containerStatuses).filter((c) => c.ready === true).length;
      return [
        objOrEmpty(o.metadata).name,
        `${ready}/${asList(spec.containers).length}`,
        str(status.reason) || str(status.phase),
        '0',
        age(objOrEmpty(o.metadata).creationTimestamp, now),
        str(status.podIP) || '<none>',
        str(spec.nodeName) || '<none>',
        str(status.nominatedNodeName) || '<none>',
        '<none>',
      ];
    },
  },
  Event: {
    columns: [
      col('Last Seen', 'The time since this event was last seen.'),
      col('Type', 'The type of this event.'),
      col('Reason', 'The reason for this event.'),
      col('Object', 'The object this event is about.'),
      col('Subobject', 'The subobject this event is about.', 1),
      col('Source', 'The source of this event.', 1),
      col('Message', 'A human-readable description of this event.'),
      col('First Seen', 'The time since this event was first seen.', 1),
      col('Count', 'The number of times this event has occurred.', 1),
      col('Name', 'The name of this event.', 1),
    ],
    cells: (o, now) => {
      const inv = objOrEmpty(o.involvedObject);
      const src = objOrEmpty(o.source);
      const last = o.lastTimestamp ?? o.eventTime ?? objOrEmpty(o.metadata).creationTimestamp;
      return [
        age(last, now),
        str(o.type),
        str(o.reason),
        `${str(inv.kind).toLowerCase()}/${str(inv.name)}`,
        str(inv.fieldPath),
        str(src.component) || str(o.reportingComponent),
        str(o.message),
        age(o.firstTimestamp ?? o.eventTime ?? objOrEmpty(o.metadata).creationTimestamp, now),
        typeof o.count === 'number' ? o.count : 1,
        objOrEmpty(o.metadata).name,
      ];
    },
  },
  Lease: {
    columns: [NAME, col('Holder', 'The holder of the lease.'), AGE],
    cells: (o, now) => [
      objOrEmpty(o.metadata).name,
      str(objOrEmpty(o.spec).holderIdentity),
      age(objOrEmpty(o.metadata).creationTimestamp, now),
    ],
  },
  ServiceAccount: {
    columns: [
      NAME,
      col(
        'Secrets',
        'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.',
        0,
        'string',
      ),
      AGE,
    ],
    cells: (o, now) => [
      objOrEmpty(o.metadata).name,
      asList(o.secrets).length,
      age(objOrEmpty(o.metadata).creationTimestamp, now),
    ],
  },
  Deployment: {
    columns: [
      NAME,
      col('Ready', 'Number of the pod with ready state'),
      col(
        'Up-to-date',
        'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
        0,
        'integer',
      ),
      col(
        'Available',
        'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
        0,
        'integer',
      ),
      AGE,
      col('Containers', 'Names of each container in the template.', 1),
      col('Images', 'Images referenced by each container in the template.', 1),
      col(
        'Selector',
        'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.',
        1,
      ),
    ],
    cells: (o, now) => {
      const spec = objOrEmpty(o.spec);
      const status = objOrEmpty(o.status);
      const containers = asList(objOrEmpty(objOrEmpty(spec.template).spec).containers);
      const selector = objOrEmpty(spec.selector);
      const num = (v: unknown) => (typeof v === 'number' ? v : 0);
      return [
        objOrEmpty(o.metadata).name,
        `${num(status.readyReplicas)}/${num(spec.replicas)}`,
        num(status.updatedReplicas),
        num(status.availableReplicas),
        age(objOrEmpty(o.metadata).creationTimestamp, now),
        containers.map((c) => str(c.name)).join(','),
        containers.map((c) => str(c.image)).join(','),
        Object.keys(objOrEmpty(selector.matchLabels)).length > 0
          ? labelsText(selector.matchLabels)
          : '<none>',
      ];
    },
  },
  Role: {
    columns: [NAME, createdAt],
    cells: (o) => [objOrEmpty(o.metadata).name, str(objOrEmpty(o.metadata).creationTimestamp)],
  },
  ClusterRole: {
    columns: [NAME, createdAt],
    cells: (o) => [objOrEmpty(o.metadata).name, str(objOrEmpty(o.metadata).creationTimestamp)],
  },
  RoleBinding: { columns: bindingColumns, cells: bindingCells },
  ClusterRoleBinding: { columns: bindingColumns, cells: bindingCells },
};

const DEFAULT_PRINTER: Printer = {
  columns: [NAME, createdAt],
  cells: (o) => [objOrEmpty(o.metadata).name, str(objOrEmpty(o.metadata).creationTimestamp)],
};

/** Options of {@link toTable}. */
export interface TableOptions {
  version: 'v1' | 'v1beta1';
  includeObject: IncludeObject;
  /** The list metadata (resourceVersion, continue, remainingItemCount); `{}` for one object. */
  listMeta: Obj;
  /** Whether to send the column definitions (a watch sends them with its first event only). */
  columns: boolean;
  apiVersion: string;
  now?: Date;
}

/** A `Table` of `items` (stored objects) of kind `r`. */
export function toTable(r: ResourceType, items: Obj[], opts: TableOptions): Obj {
  const printer = PRINTERS[r.kind] ?? DEFAULT_PRINTER;
  const now = opts.now ?? new Date();
  const apiVersion = `meta.k8s.io/${opts.version}`;
  const rows = items.map((o) => {
    const row: Obj = { cells: printer.cells(o, now) };
    if (opts.includeObject === 'Object')
      row.object = { kind: r.kind, apiVersion: opts.apiVersion, ...o };
    else if (opts.includeObject === 'Metadata')
      row.object = { kind: 'PartialObjectMetadata', apiVersion, metadata: o.metadata };
    // A RawExtension with nothing in it: Go writes `null` (no `omitempty` applies to it).
    else row.object = null;
    return row;
  });
  return {
    kind: 'Table',
    apiVersion,
    metadata: opts.listMeta,
    // A watch's later events leave the columns nil, which Go writes as `null`.
    columnDefinitions: opts.columns ? printer.columns : null,
    rows,
  };
}
