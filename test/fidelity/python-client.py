"""The Debian python3-kubernetes client against a fidelity target.

Run by python-client.test.ts: python3 python-client.py KUBECONFIG NAMESPACE. Runs every
operation below in order and prints one JSON object on stdout: for each operation, either
{"ok": true, "value": ...} (what the test asserts) or {"ok": false, "error": ...} (the
exception's type, HTTP status and Status reason/message; never object data).
"""

import json
import sys
import threading
import time
from datetime import datetime, timezone

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

kubeconfig, ns = sys.argv[1], sys.argv[2]
api = config.new_client_from_config(config_file=kubeconfig)
core = client.CoreV1Api(api)
apps = client.AppsV1Api(api)
disco = client.DiscoveryV1Api(api)
coord = client.CoordinationV1Api(api)
rbac = client.RbacAuthorizationV1Api(api)

results = {}
ops = []


def op(fn):
    ops.append(fn)
    return fn


def describe(err):
    if isinstance(err, ApiException):
        reason = message = None
        try:
            body = json.loads(err.body)
            reason, message = body.get("reason"), body.get("message")
        except Exception:
            pass
        return {"type": "ApiException", "status": err.status, "reason": reason, "message": message}
    return {"type": type(err).__name__, "message": str(err)[:300]}


def status_of(call):
    """The HTTP status a call failed with (None when it succeeded)."""
    try:
        call()
    except ApiException as err:
        return err.status
    return None


def ours(items):
    """The objects this script made (py-*): a real cluster's namespace has others, such as the
    kube-root-ca.crt ConfigMap the root-ca publisher puts in every namespace."""
    return [i for i in items if i.metadata.name.startswith("py-")]


def cm(name, labels=None, data=None):
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name, labels=labels), data=data
    )


# --- ConfigMaps: namespaced CRUD -------------------------------------------------------------


@op
def create_configmap():
    made = core.create_namespaced_config_map(ns, cm("py-cm", {"app": "py", "tier": "a"}, {"a": "1"}))
    return {"name": made.metadata.name, "hasResourceVersion": bool(made.metadata.resource_version)}


@op
def create_conflict():
    return {"status": status_of(lambda: core.create_namespaced_config_map(ns, cm("py-cm")))}


@op
def get_configmap():
    return {"data": core.read_namespaced_config_map("py-cm", ns).data}


@op
def get_missing():
    try:
        core.read_namespaced_config_map("py-missing", ns)
    except ApiException as err:
        body = json.loads(err.body)
        return {"status": err.status, "reason": body["reason"], "message": body["message"]}
    return {"status": 200}


@op
def list_configmaps():
    lst = core.list_namespaced_config_map(ns)
    return {
        "names": [i.metadata.name for i in ours(lst.items)],
        "hasResourceVersion": bool(lst.metadata.resource_version),
    }


@op
def replace_configmap():
    cur = core.read_namespaced_config_map("py-cm", ns)
    cur.data = {"a": "1", "r": "replaced"}
    return {"data": core.replace_namespaced_config_map("py-cm", ns, cur).data}


@op
def replace_stale():
    stale = core.read_namespaced_config_map("py-cm", ns)
    core.patch_namespaced_config_map("py-cm", ns, {"metadata": {"annotations": {"bump": "1"}}})
    stale.data = {"stale": "1"}
    return {"status": status_of(lambda: core.replace_namespaced_config_map("py-cm", ns, stale))}


@op
def patch_strategic():
    # A dict body makes the client send application/strategic-merge-patch+json.
    return {"data": core.patch_namespaced_config_map("py-cm", ns, {"data": {"s": "2"}}).data}


@op
def patch_merge():
    # The typed API of the v22 client has no content-type argument; the dynamic client has.
    res = DynamicClient(api).resources.get(api_version="v1", kind="ConfigMap")
    out = res.patch(
        body={"data": {"r": None}}, name="py-cm", namespace=ns,
        content_type="application/merge-patch+json",
    )
    return {"data": dict(out.data)}


@op
def patch_json():
    out = core.patch_namespaced_config_map(
        "py-cm", ns, [{"op": "add", "path": "/data/j", "value": "3"}]
    )
    return {"data": out.data}


def apply(name, data, manager, force=None):
    res = DynamicClient(api).resources.get(api_version="v1", kind="ConfigMap")
    # The v22 client sends a str body as it is (a dict is refused for a YAML content type);
    # JSON is YAML.
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}
    return res.server_side_apply(
        body=json.dumps(body), name=name, namespace=ns, field_manager=manager,
        force_conflicts=force,
    )


@op
def apply_field_manager():
    out = apply("py-applied", {"k": "v"}, "py-apply")
    again = apply("py-applied", {"k": "v", "l": "w"}, "py-apply")
    managers = [[m["manager"], m["operation"]] for m in again.metadata.managedFields]
    return {"created": dict(out.data), "data": dict(again.data), "managers": managers}


@op
def apply_conflict_then_force():
    conflict = None
    try:
        apply("py-applied", {"k": "other"}, "py-other")
    except ApiException as err:
        conflict = {"status": err.status, "message": json.loads(err.body)["message"]}
    forced = apply("py-applied", {"k": "other"}, "py-other", force=True)
    return {"conflict": conflict, "forced": dict(forced.data)}


@op
def label_selector():
    core.create_namespaced_config_map(ns, cm("py-other", {"app": "py", "tier": "c"}))
    lst = core.list_namespaced_config_map(ns, label_selector="app=py,tier in (a,b)")
    notin = core.list_namespaced_config_map(ns, label_selector="app=py,tier notin (a)")
    return {"in": [i.metadata.name for i in lst.items], "notin": [i.metadata.name for i in notin.items]}


@op
def field_selector():
    lst = core.list_namespaced_config_map(ns, field_selector="metadata.name=py-other")
    return {"names": [i.metadata.name for i in lst.items]}


@op
def limit_continue():
    first = core.list_namespaced_config_map(ns, limit=2)
    paged = list(first.items)
    token = first.metadata._continue
    while token:
        page = core.list_namespaced_config_map(ns, limit=2, _continue=token)
        paged += page.items
        token = page.metadata._continue
    return {
        "first": len(first.items),
        "hasContinue": bool(first.metadata._continue),
        "total": len(ours(paged)),
        "all": len(ours(core.list_namespaced_config_map(ns).items)),
    }


@op
def dry_run_create():
    core.create_namespaced_config_map(ns, cm("py-dry"), dry_run="All")
    return {"afterwards": status_of(lambda: core.read_namespaced_config_map("py-dry", ns))}


@op
def watch_streams():
    """watch=True must stream: an object created after the watch started arrives as ADDED."""
    rv = core.list_namespaced_config_map(ns).metadata.resource_version
    w = watch.Watch()
    timer = threading.Timer(
        0.5, lambda: core.create_namespaced_config_map(ns, cm("py-watched"))
    )
    timer.start()
    seen = []
    for event in w.stream(
        core.list_namespaced_config_map, ns, resource_version=rv, timeout_seconds=10
    ):
        seen.append([event["type"], event["object"].metadata.name])
        if event["object"].metadata.name == "py-watched":
            w.stop()
    timer.join()
    return {"events": seen}


@op
def watch_selector_initial():
    """Without a resourceVersion the watch starts with the current state, selectors applied."""
    w = watch.Watch()
    seen = []
    for event in w.stream(
        core.list_namespaced_config_map, ns, label_selector="tier=c", timeout_seconds=2
    ):
        seen.append([event["type"], event["object"].metadata.name])
    return {"events": seen}


@op
def delete_configmap():
    core.delete_namespaced_config_map(
        "py-other", ns, body=client.V1DeleteOptions(propagation_policy="Background")
    )
    core.delete_namespaced_config_map("py-watched", ns, grace_period_seconds=0)
    return {
        "afterwards": status_of(lambda: core.read_namespaced_config_map("py-other", ns)),
        "again": status_of(lambda: core.delete_namespaced_config_map("py-other", ns)),
    }


@op
def delete_collection():
    for i in range(3):
        core.create_namespaced_config_map(ns, cm(f"py-bulk-{i}", {"bulk": "yes"}))
    core.delete_collection_namespaced_config_map(ns, label_selector="bulk=yes")
    left = core.list_namespaced_config_map(ns, label_selector="bulk=yes")
    return {"left": [i.metadata.name for i in left.items]}


@op
def pretty_and_rv0():
    pretty = core.list_namespaced_config_map(ns, pretty="true")
    cached = core.list_config_map_for_all_namespaces(resource_version="0")
    return {
        "pretty": len(ours(pretty.items)),
        "cached": len(ours([i for i in cached.items if i.metadata.namespace == ns])),
    }


@op
def watch_expired():
    """A watch from a compacted resourceVersion ends with 410, which the client raises. Where
    resourceVersion 1 is still in the server's history (a real cluster minutes old), the watch
    replays it instead: reported as the first event's type."""
    for i in range(60):
        core.patch_namespaced_config_map("py-cm", ns, {"data": {"n": str(i)}})
    first = None
    try:
        for event in watch.Watch().stream(
            core.list_namespaced_config_map, ns, resource_version="1", timeout_seconds=2
        ):
            first = first or event["type"]
    except ApiException as err:
        return {"status": err.status, "reason": err.reason}
    return {"status": None, "first": first}


@op
def service_status():
    svc = client.V1Service(
        metadata=client.V1ObjectMeta(name="py-svc"),
        spec=client.V1ServiceSpec(type="LoadBalancer", ports=[client.V1ServicePort(port=80)]),
    )
    made = core.create_namespaced_service(ns, svc)
    core.patch_namespaced_service_status(
        "py-svc", ns, {"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}}
    )
    got = core.read_namespaced_service_status("py-svc", ns)
    return {
        "clusterIP": bool(made.spec.cluster_ip),
        "ingress": [i.ip for i in got.status.load_balancer.ingress],
    }


# --- Endpoints and EndpointSlices ---------------------------------------------------------------


@op
def endpoints_crud():
    ep = client.V1Endpoints(
        metadata=client.V1ObjectMeta(name="py-ep"),
        subsets=[client.V1EndpointSubset(
            addresses=[client.V1EndpointAddress(ip="10.50.0.1")],
            ports=[client.CoreV1EndpointPort(name="http", port=80)],
        )],
    )
    core.create_namespaced_endpoints(ns, ep)
    # A strategic merge replaces subsets whole (no merge key).
    out = core.patch_namespaced_endpoints(
        "py-ep", ns, {"subsets": [{"addresses": [{"ip": "10.50.0.2"}], "ports": [{"port": 81}]}]}
    )
    everywhere = core.list_endpoints_for_all_namespaces(field_selector=f"metadata.namespace={ns}")
    return {
        "ips": [a.ip for s in out.subsets for a in s.addresses],
        "all": [i.metadata.name for i in everywhere.items],
    }


def slice_body(name, ip):
    return client.V1EndpointSlice(
        metadata=client.V1ObjectMeta(name=name, labels={"kubernetes.io/service-name": "py-svc"}),
        address_type="IPv4",
        endpoints=[client.V1Endpoint(addresses=[ip], conditions=client.V1EndpointConditions(ready=True))],
        ports=[client.DiscoveryV1EndpointPort(name="http", port=80, protocol="TCP")],
    )


@op
def endpointslices_crud():
    made = disco.create_namespaced_endpoint_slice(ns, slice_body("py-slice", "10.60.0.1"))
    cur = disco.read_namespaced_endpoint_slice("py-slice", ns)
    cur.endpoints[0].addresses = ["10.60.0.2"]
    replaced = disco.replace_namespaced_endpoint_slice("py-slice", ns, cur)
    patched = disco.patch_namespaced_endpoint_slice(
        "py-slice", ns, {"metadata": {"labels": {"extra": "1"}}}
    )
    listed = disco.list_namespaced_endpoint_slice(ns, label_selector="kubernetes.io/service-name=py-svc")
    everywhere = disco.list_endpoint_slice_for_all_namespaces(label_selector="extra=1")
    disco.delete_namespaced_endpoint_slice("py-slice", ns)
    return {
        "addressType": made.address_type,
        "replaced": replaced.endpoints[0].addresses,
        "labels": patched.metadata.labels,
        "listed": [i.metadata.name for i in listed.items],
        "everywhere": [i.metadata.name for i in everywhere.items if i.metadata.namespace == ns],
        "afterwards": status_of(lambda: disco.read_namespaced_endpoint_slice("py-slice", ns)),
    }


@op
def endpointslices_watch():
    rv = disco.list_namespaced_endpoint_slice(ns).metadata.resource_version
    w = watch.Watch()
    timer = threading.Timer(
        0.5, lambda: disco.create_namespaced_endpoint_slice(ns, slice_body("py-slice-w", "10.60.0.3"))
    )
    timer.start()
    seen = []
    for event in w.stream(
        disco.list_namespaced_endpoint_slice, ns, resource_version=rv, timeout_seconds=10
    ):
        seen.append([event["type"], event["object"].metadata.name])
        w.stop()
    timer.join()
    return {"events": seen}


# --- Leases ----------------------------------------------------------------------------------


@op
def leases_crud():
    lease = client.V1Lease(
        metadata=client.V1ObjectMeta(name="py-lease"),
        spec=client.V1LeaseSpec(
            holder_identity="py-a",
            lease_duration_seconds=15,
            acquire_time=datetime.now(timezone.utc),
            renew_time=datetime.now(timezone.utc),
        ),
    )
    coord.create_namespaced_lease(ns, lease)
    cur = coord.read_namespaced_lease("py-lease", ns)
    cur.spec.holder_identity = "py-b"
    cur.spec.renew_time = datetime.now(timezone.utc)
    out = coord.replace_namespaced_lease("py-lease", ns, cur)
    return {
        "holder": out.spec.holder_identity,
        "renewIsTime": isinstance(out.spec.renew_time, datetime),
        "names": [i.metadata.name for i in coord.list_namespaced_lease(ns).items],
    }


# --- Cluster-scoped kinds --------------------------------------------------------------------


@op
def namespaces_crud():
    name = ns + "-py"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name, labels={"py": "yes"})))
    got = core.read_namespace(name)
    listed = core.list_namespace(label_selector="py=yes")
    by_field = core.list_namespace(field_selector=f"metadata.name={name}")
    deleted = core.delete_namespace(name)
    return {
        "phase": got.status.phase,
        "listed": [i.metadata.name for i in listed.items],
        "byField": [i.metadata.name for i in by_field.items],
        # The typed client reads the returned Namespace as a V1Status, whose status is a string.
        "deletedTerminating": "Terminating" in str(deleted.status),
    }


@op
def clusterroles_crud():
    name = ns + "-py-role"
    role = client.V1ClusterRole(
        metadata=client.V1ObjectMeta(name=name),
        rules=[client.V1PolicyRule(api_groups=[""], resources=["endpoints"], verbs=["get"])],
    )
    rbac.create_cluster_role(role)
    patched = rbac.patch_cluster_role(name, {"metadata": {"labels": {"py": "yes"}}})
    rbac.delete_cluster_role(name)
    return {
        "labels": patched.metadata.labels,
        "rules": [r.verbs for r in patched.rules],
        "afterwards": status_of(lambda: rbac.read_cluster_role(name)),
    }


# --- Deployments and their scale subresource -------------------------------------------------


@op
def deployment_scale():
    dep = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="py-dep"),
        spec=client.V1DeploymentSpec(
            replicas=1,
            selector=client.V1LabelSelector(match_labels={"app": "py-dep"}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": "py-dep"}),
                spec=client.V1PodSpec(containers=[client.V1Container(name="app", image="example.com/app:1")]),
            ),
        ),
    )
    apps.create_namespaced_deployment(ns, dep)
    read = apps.read_namespaced_deployment_scale("py-dep", ns)
    patched = apps.patch_namespaced_deployment_scale("py-dep", ns, {"spec": {"replicas": 3}})
    patched_replicas = patched.spec.replicas
    patched.spec.replicas = 4
    replaced = apps.replace_namespaced_deployment_scale("py-dep", ns, patched)
    return {
        "read": [read.spec.replicas, read.status.selector],
        "patched": patched_replicas,
        "replaced": replaced.spec.replicas,
        "deployment": apps.read_namespaced_deployment("py-dep", ns).spec.replicas,
    }


# --- The dynamic client (discovery) ----------------------------------------------------------


@op
def dynamic_discovery():
    dyn = DynamicClient(api)
    slices = dyn.resources.get(api_version="discovery.k8s.io/v1", kind="EndpointSlice")
    leases = dyn.resources.get(api_version="coordination.k8s.io/v1", kind="Lease")
    return {
        "slicesNamespaced": slices.namespaced,
        "leases": [i.metadata.name for i in leases.get(namespace=ns).items],
    }


for fn in ops:
    started = time.monotonic()
    try:
        results[fn.__name__] = {"ok": True, "value": fn()}
    except Exception as err:  # every failure is reported, none stops the run
        results[fn.__name__] = {"ok": False, "error": describe(err)}
    results[fn.__name__]["ms"] = round((time.monotonic() - started) * 1000)

print(json.dumps(results, default=str))
