"""A deliberately non-compliant stack makes every rule of the pack fire.

The config layer refuses most of these settings before anything is registered, so the
non-compliant stack is built where the pack sees it: the recording of a real stack (prod),
edited the way a hand-written program or a careless change would register it."""

from __future__ import annotations

import copy
import dataclasses

from conftest import synth_stack
from gke_ai_batch.domain import pricing
from gke_ai_batch.policy import rules
from gke_ai_batch.synth import policy as synth_policy

NODE_POOL = "gcp:container/nodePool:NodePool"


def edited(resources, type_: str, name: str, edit) -> None:
    (target,) = [r for r in resources if r.type == type_ and r.name == name]
    edit(target.inputs)


def added(res, like, type_: str, name: str, inputs: dict, parent: str | None = None, options: dict | None = None) -> None:
    """Register one more resource, under the same parent as `like` (or under `parent`)."""
    urn = like.urn[: like.urn.rindex(like.type)] + f"{type_}::{name}"
    more = {} if parent is None else {"parent": parent, "options": options or {}, "dependencies": []}
    res.append(dataclasses.replace(like, urn=urn, type=type_, name=name, inputs=inputs, **more))


def noncompliant_prod():
    prod = synth_stack("prod")
    # A budget of $1 per 30 days, as the program records gke-ai-batch:budget: stack-budget.
    over_budget = {**prod.recording.outputs, pricing.BUDGET_OUTPUT: pricing.budget_output(1.0, {})}
    recording = dataclasses.replace(
        prod.recording, resources=copy.deepcopy(prod.recording.resources), outputs=over_budget
    )
    result = dataclasses.replace(prod, recording=recording)
    res = recording.resources

    def cluster(i):
        del i["workloadIdentityConfig"]  # gke-workload-identity
        i["enableShieldedNodes"] = False  # gke-shielded-nodes
        del i["releaseChannel"]  # gke-release-channel
        i["deletionProtection"] = False  # gke-deletion-protection (prod)
        del i["privateClusterConfig"]  # gke-private-nodes
        del i["nodeConfig"]["serviceAccount"]  # gke-node-service-account
        del i["masterAuthorizedNetworksConfig"]  # gke-control-plane-not-public: with no private endpoint either
        i["controlPlaneEndpointsConfig"]["dnsEndpointConfig"]["allowExternalTraffic"] = False  # gke-dns-endpoint
        del i["datapathProvider"]  # gke-dataplane-v2
        del i["databaseEncryption"]  # gke-secrets-encryption (prod requires it)
        del i["binaryAuthorization"]  # gke-binary-authorization (prod requires it)

    edited(res, "gcp:container/cluster:Cluster", "cluster", cluster)
    (system,) = [r for r in res if r.type == NODE_POOL and r.name == "system"]
    del system.options["protect"]  # gke-protect-stateful

    def queued_pool(i):
        i["nodeCount"] = 2  # pool-flex-queued-from-zero
        i["management"]["autoRepair"] = True

    edited(res, NODE_POOL, "h100-dws", queued_pool)
    edited(res, NODE_POOL, "v5p-train-0", lambda i: i.update(nodeCount=15))  # pool-tpu-multihost-slice: 16 VMs
    # gke-unique-node-pools: a second component registering a pool the cluster already has.
    (spot,) = [r for r in res if r.type == NODE_POOL and r.name == "v6e-spot-0"]
    added(res, spot, NODE_POOL, "v6e-spot-0-again", copy.deepcopy(spot.inputs))
    # k8s-unique-objects: a second resource applying a ServiceAccount the cluster already has.
    account = next(r for r in res if r.type == "kubernetes:core/v1:ServiceAccount")
    added(res, account, account.type, f"{account.name}-again", copy.deepcopy(account.inputs))
    edited(res, "kubernetes:helm.sh/v3:Release", "kueue", lambda i: i.update(version="^0.19"))  # helm-chart-pinned

    def training_queue(i):
        flavors = i["spec"]["resourceGroups"][0]["flavors"]
        flavors[0]["resources"][0]["nominalQuota"] = 100000  # kueue-quota-within-capacity
        flavors.append({"name": "ghost", "resources": [{"name": "google.com/tpu", "nominalQuota": 0}]})  # flavors-exist

    edited(res, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "training", training_queue)

    def research_queue(i):
        # Leave the research queue only its spot and queued flavors (queue-interruptible-only),
        # and have it admit through MultiKueue besides its ProvisioningRequest check
        # (fleet-multikueue-only: Kueue deactivates such a queue).
        for group in i["spec"]["resourceGroups"]:
            group["flavors"] = [f for f in group["flavors"] if not f["name"].endswith("-reserved")]
        i["spec"]["admissionChecksStrategy"]["admissionChecks"].append({"name": "fleet"})

    edited(res, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "research", research_queue)
    (check,) = [r for r in res if r.type.endswith(":AdmissionCheck") and r.name == "dws-prov"]
    multikueue = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": "fleet"},
                  "spec": {"controllerName": "kueue.x-k8s.io/multikueue",
                           "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "fleet"}}}
    added(res, check, check.type, "fleet", multikueue)
    # Two MultiKueue workers of prod in one region (fleet-worker-regions), with no kubeconfig
    # Secret (fleet-multikueue-names), whose team namespaces and queues are nowhere
    # (fleet-teams-everywhere), the research queue dispatched to them all the same
    # (fleet-dispatch-targets), and a worker's token kubeconfig in a ConfigMap
    # (fleet-kubeconfig-secret).
    config = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "MultiKueueConfig", "metadata": {"name": "fleet"},
              "spec": {"clusters": ["east", "east-b"]}}
    added(res, check, "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueConfig", "fleet", config)
    (gke,) = [r for r in res if r.type == "gcp:container/cluster:Cluster"]
    stack = res[0]
    for worker in ("east", "east-b"):
        # Each worker a cluster of its own, with a provider that reaches it (the fleet stack's
        # names: the worker's MultiKueueCluster is named as its cluster's objects are scoped).
        added(res, stack, gke.type, f"{worker}/cluster", {**copy.deepcopy(gke.inputs), "name": f"ml-{worker}"}, stack.urn)
        added(res, stack, "pulumi:providers:kubernetes", f"{worker}/k8s", {"cluster": f"ml-{worker}"}, stack.urn)
        added(res, stack, "kubernetes:core/v1:ServiceAccount", f"{worker}/kueue-system/multikueue-sa",
              {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "multikueue-sa", "namespace": "kueue-system"}},
              stack.urn, {"provider": res[-1].urn})
        mkc = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "MultiKueueCluster", "metadata": {"name": worker},
               "spec": {"clusterSource": {"kubeConfig": {"location": f"multikueue-{worker}", "locationType": "Secret"}}}}
        added(res, check, "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster", worker, mkc)
    kubeconfig = "apiVersion: v1\nkind: Config\nusers:\n- name: east\n  user:\n    token: abc.def.ghi\n"
    added(res, check, "kubernetes:core/v1:ConfigMap", "kueue-system/east",
          {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "east", "namespace": "kueue-system"},
           "data": {"kubeconfig": kubeconfig}})

    # A team namespace whose level is gone (namespace-pod-security), and one whose NetworkPolicy
    # is gone (namespace-network-policy).
    edited(res, "kubernetes:core/v1:Namespace", "research", lambda i: i["metadata"].pop("labels"))
    res.remove(next(r for r in res if r.type.endswith(":NetworkPolicy") and r.name == "evals/same-namespace-only"))

    # A workload of the top priority in the research queue, whose flavors are all spot or
    # queued (queue-interruptible-only), privileged on GPUs (workload-privileged-tpu-only),
    # naming a priority class that does not exist (workload-known-priority)...
    template = next(r for r in res if r.type == "kubernetes:core/v1:Namespace")
    job_spec = {
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "priorityClassName": "no-such-class",
                "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"},
                "containers": [{"name": "c", "image": "i", "securityContext": {"privileged": True}}],
            }
        }
    }
    top = {"kueue.x-k8s.io/queue-name": "research", "kueue.x-k8s.io/priority-class": "production-critical"}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bad", "namespace": "research", "labels": top}, "spec": job_spec}
    added(res, template, "kubernetes:batch/v1:Job", "research/bad", job)
    # ... one with no queue label (workload-queue-label), and one naming a queue that does not
    # exist in its namespace (workload-known-queue).
    for name, labels in (("unqueued", {}), ("lost", {"kueue.x-k8s.io/queue-name": "nowhere"})):
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": "research", "labels": labels},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}},
        }
        added(res, template, "kubernetes:batch/v1:Job", f"research/{name}", job)
    # The research team's Role lets it create Pods and edit its LocalQueue
    # (rbac-no-queue-bypass); the Jobs above run untagged images (image-pinned).
    edited(
        res,
        "kubernetes:rbac.authorization.k8s.io/v1:Role",
        "research/gke-ai-batch-team",
        lambda i: i["rules"].extend(
            [
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]},
                {"apiGroups": ["kueue.x-k8s.io"], "resources": ["localqueues"], "verbs": ["update"]},
            ]
        ),
    )
    # The probe's ServiceAccount bound cluster-wide as well (probe-namespaced-rbac).
    probe = next(r for r in res if r.type.endswith(":RoleBinding") and r.name == "kueue-system/gke-ai-batch-webhook-probe")
    inputs = copy.deepcopy(probe.inputs)
    inputs.update(kind="ClusterRoleBinding", roleRef={**inputs["roleRef"], "kind": "ClusterRole", "name": "edit"})
    del inputs["metadata"]["namespace"]
    added(res, probe, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "gke-ai-batch-webhook-probe", inputs)
    return result


def test_every_rule_fires_on_a_noncompliant_stack():
    violations = synth_policy.evaluate(noncompliant_prod())
    fired = {v["policy"] for v in violations}
    assert fired == {rule.name for rule in rules.RULES}, sorted({r.name for r in rules.RULES} - fired)


def test_the_same_stack_unedited_is_clean():
    assert not [v for v in synth_policy.evaluate(synth_stack("prod")) if v["enforcement"] == "mandatory"]
