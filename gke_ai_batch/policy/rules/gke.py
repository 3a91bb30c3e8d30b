"""GKE rules: the cluster's security baseline and the accelerator pools' shape.

Resource rules: `check(type_, props, config)` yields one message per problem."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gke_ai_batch.domain import catalogue

from gke_ai_batch.domain import netblocks
from gke_ai_batch.domain import versions

from collections.abc import Sequence

from .base import CLUSTER, EMPTY, NODE_POOL, GCP_SERVICE_ACCOUNT, UNKNOWN, Resource, as_dict, as_int, as_list, dig, of_type
from gke_ai_batch.model.facts import auto_provisioning, is_autopilot, tpu_generation

# The channels the catalogue models, and EXTENDED, which GKE offers too (concepts/release-channels)
# though a stack cannot choose it.
RELEASE_CHANNELS = (*versions.CHANNEL_NAMES, "EXTENDED")
DEFAULT_COMPUTE_SA_SUFFIX = "-compute@developer.gserviceaccount.com"


def workload_identity(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    if type_ == CLUSTER:
        if is_autopilot(props):
            return  # always on in Autopilot
        pool = dig(props, "workloadIdentityConfig", "workloadPool")
        if not pool:
            yield (
                "Workload Identity is off: set workloadIdentityConfig.workloadPool to '<project>.svc.id.goog' "
                "so that pods authenticate as their Kubernetes service account, not as the node"
            )
    elif type_ == NODE_POOL and dig(props, "nodeConfig", "workloadMetadataConfig", "mode") == "GCE_METADATA":
        yield (
            "nodeConfig.workloadMetadataConfig.mode is GCE_METADATA: pods on this pool reach the node's "
            "credentials through the metadata server; use GKE_METADATA"
        )


def shielded_nodes(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    if type_ == NODE_POOL:
        yield from _secure_boot("nodeConfig", dig(props, "nodeConfig", "shieldedInstanceConfig", "enableSecureBoot"))
        return
    if type_ != CLUSTER or is_autopilot(props):
        return  # Autopilot nodes are always shielded with secure boot
    if props.get("enableShieldedNodes") is False:
        yield "enableShieldedNodes is false: nodes could boot unverified images and lose integrity monitoring"
    if props.get("removeDefaultNodePool") is not True:
        yield from _secure_boot(
            "the default node pool's nodeConfig", dig(props, "nodeConfig", "shieldedInstanceConfig", "enableSecureBoot")
        )
    if auto_provisioning(props):
        defaults = dig(props, "clusterAutoscaling", "autoProvisioningDefaults")
        yield from _secure_boot(
            "clusterAutoscaling.autoProvisioningDefaults", dig(defaults, "shieldedInstanceConfig", "enableSecureBoot")
        )


def _secure_boot(where: str, value: Any) -> Iterator[str]:
    if value is not True and value != UNKNOWN:
        yield (
            f"{where}.shieldedInstanceConfig.enableSecureBoot is {_show(value)}: "
            "nodes must boot only signed, verified components"
        )


def node_service_account(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    if type_ == NODE_POOL:
        yield from _service_account("nodeConfig", dig(props, "nodeConfig", "serviceAccount"))
        return
    if type_ != CLUSTER:
        return
    defaults = dig(props, "clusterAutoscaling", "autoProvisioningDefaults", "serviceAccount")
    if is_autopilot(props):
        yield from _service_account("clusterAutoscaling.autoProvisioningDefaults", defaults)
        return
    # The default pool lives for minutes when removed, but it runs as this account all the same.
    yield from _service_account("nodeConfig", dig(props, "nodeConfig", "serviceAccount"))
    if auto_provisioning(props):
        yield from _service_account("clusterAutoscaling.autoProvisioningDefaults", defaults)


def _service_account(where: str, account: Any) -> Iterator[str]:
    if account == UNKNOWN:
        return  # an email computed at deploy time: an account the stack creates, not the default
    if not account or account == "default":
        yield (
            f"{where} names no serviceAccount: nodes would run as the Compute Engine default service account "
            "(project Editor); give them a dedicated account with roles/container.defaultNodeServiceAccount"
        )
    elif isinstance(account, str) and account.endswith(DEFAULT_COMPUTE_SA_SUFFIX):
        yield (
            f"{where}.serviceAccount {account} is the Compute Engine default service account (project Editor); "
            "give nodes a dedicated account with roles/container.defaultNodeServiceAccount"
        )


def release_channel(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    channel = dig(props, "releaseChannel", "channel")
    if channel == UNKNOWN or channel in RELEASE_CHANNELS:
        return
    yield (
        f"releaseChannel.channel is {_show(channel)}: enrol the cluster in {', '.join(RELEASE_CHANNELS)} "
        "so that GKE patches the control plane and nodes"
    )


def deletion_protection(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    if not config.get("production"):
        return
    # The provider's default is true, so only an explicit false unprotects the cluster.
    if props.get("deletionProtection") is False:
        yield (
            "production stack with deletionProtection false: a mistaken destroy or replacement would delete "
            "the cluster and every workload on it; set cluster.deletionProtection true"
        )


def private_nodes(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    """Advises once, until the stack decides: an explicit enablePrivateNodes false (the program
    writes it only for `privateNodes: false` in the stack file) is a decision, not an oversight,
    and an advisory printed on every run for a settled choice only teaches people to skip them."""
    private = dig(props, "privateClusterConfig", "enablePrivateNodes")
    if private is True or private is False or private == UNKNOWN:
        return
    yield (
        "decide whether nodes get public IP addresses (cluster.privateNodes is unset, so they do): write "
        "privateNodes true for nodes without them, which then reach registries outside Google's APIs "
        "(registry.k8s.io, Docker Hub) only through a Cloud NAT this program does not create, or privateNodes "
        "false to keep public nodes and settle this advisory"
    )


# -- control plane and cluster hardening (GKE docs concepts/network-isolation,
# how-to/encrypting-secrets, concepts/dataplane-v2; Binary Authorization docs) ----------------


def control_plane_not_public(
    type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY
) -> Iterator[str]:
    """The public IP endpoint is off (no IP endpoints, or only the private one), or authorized
    networks limit it: without them GKE's IP endpoint answers the whole internet."""
    if dig(props, "controlPlaneEndpointsConfig", "ipEndpointsConfig", "enabled") is False:
        return
    private_only = dig(props, "privateClusterConfig", "enablePrivateEndpoint")
    private_nodes = dig(props, "privateClusterConfig", "enablePrivateNodes")
    # enablePrivateEndpoint "only applies to private clusters, when enable_private_nodes is
    # true" (pulumi-gcp ClusterPrivateClusterConfigArgs): with public nodes the public IP
    # endpoint stays, whatever it says.
    if (private_only is True or private_only == UNKNOWN) and (private_nodes is True or private_nodes == UNKNOWN):
        return
    networks = props.get("masterAuthorizedNetworksConfig")
    if networks == UNKNOWN:
        return
    if not isinstance(networks, Mapping):
        yield (
            "the control plane's public IP endpoint is open to the internet: no masterAuthorizedNetworksConfig; "
            "limit it to authorized networks (cluster.masterAuthorizedNetworks), make it private or disable it "
            "(cluster.controlPlane.ipEndpoint) and use the DNS endpoint"
        )
        return
    if networks.get("gcpPublicCidrsAccessEnabled") is True:
        yield (
            "masterAuthorizedNetworksConfig.gcpPublicCidrsAccessEnabled is true: every Compute Engine VM's public "
            "address, anyone's, reaches the control plane's public IP endpoint"
        )
    cidrs = [dig(block, "cidrBlock") for block in as_list(networks.get("cidrBlocks"))]
    known = [c for c in cidrs if isinstance(c, str) and c != UNKNOWN]
    for _, message in netblocks.problems(known, private_nodes is True):
        yield f"masterAuthorizedNetworksConfig: {message}"


def dns_endpoint(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    if not config.get("production"):
        return
    allowed = dig(props, "controlPlaneEndpointsConfig", "dnsEndpointConfig", "allowExternalTraffic")
    if allowed is True or allowed == UNKNOWN:
        return
    yield (
        "production cluster without the DNS endpoint (controlPlaneEndpointsConfig.dnsEndpointConfig."
        "allowExternalTraffic): people and the deploy workflow should reach it through the IAM-authorized DNS "
        "endpoint, with the IP endpoint private or limited; set cluster.controlPlane.dnsEndpoint true"
    )


def dataplane_v2(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    if not config.get("production") or is_autopilot(props):
        return  # Autopilot always runs Dataplane V2
    provider = props.get("datapathProvider")
    if provider == "ADVANCED_DATAPATH" or provider == UNKNOWN:
        return
    yield (
        f"production Standard cluster with datapathProvider {_show(provider)}: use ADVANCED_DATAPATH "
        "(GKE Dataplane V2: network policy enforced in eBPF, with logging); set cluster.dataplaneV2 true. "
        "It cannot change on an existing cluster: switching replaces it"
    )


def secrets_encryption(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    if not config.get("required"):
        return
    state = dig(props, "databaseEncryption", "state")
    key = dig(props, "databaseEncryption", "keyName")
    if (state == "ENCRYPTED" or state == UNKNOWN) and key:
        return
    yield (
        "this stack requires application-layer secrets encryption, and the cluster has none "
        f"(databaseEncryption.state {_show(state)}): set cluster.databaseEncryption.keyName to a Cloud KMS key "
        "in the cluster's region"
    )


def binary_authorization(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    if not config.get("required"):
        return
    mode = dig(props, "binaryAuthorization", "evaluationMode")
    if mode == "PROJECT_SINGLETON_POLICY_ENFORCE" or mode == UNKNOWN:
        return
    yield (
        f"this stack requires Binary Authorization, and binaryAuthorization.evaluationMode is {_show(mode)}: "
        "set cluster.binaryAuthorization true (PROJECT_SINGLETON_POLICY_ENFORCE)"
    )


STATEFUL = (CLUSTER, NODE_POOL, GCP_SERVICE_ACCOUNT)


def protect_stateful(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str | None, str]]:
    """Production: every cluster, node pool and service account is protected, so that no
    `pulumi up` deletes or replaces it until a reviewed change lifts protection."""
    if not config.get("production"):
        return
    for r in resources:
        if r.type in STATEFUL and not r.protect:
            yield r.urn, (
                f"production stack, and {r.type.rsplit(':', 1)[-1]} {r.name} is not protected: a replacement or a "
                "mistaken destroy would delete it (and what runs on it or as it)"
            )


def unique_node_pools(resources: Sequence[Resource], config: Mapping[str, Any] = EMPTY) -> Iterator[tuple[str | None, str]]:
    """One name, one node pool, per cluster: GKE refuses to create a second pool of a name the
    cluster has (nodePools.create answers 409 ALREADY_EXISTS; the name is the pool's id in
    projects/P/locations/L/clusters/C/nodePools/NAME,
    https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools).
    Two components of a library program can name the same pool (pool_name), which each alone
    cannot see. A cluster or location not known at preview is no evidence either way."""
    seen: dict[tuple[Any, ...], str] = {}
    for r in of_type(resources, NODE_POOL):
        key = tuple(r.props.get(k) for k in ("project", "location", "cluster", "name"))
        if any(not isinstance(v, str) for v in key[1:]):
            continue
        if key in seen:
            yield r.urn, (
                f"node pool {key[3]!r} of cluster {key[2]!r} in {key[1]} is also {seen[key]}: GKE refuses a second "
                "node pool of one name in a cluster (ALREADY_EXISTS)"
            )
        else:
            seen[key] = r.urn


# -- accelerator pools ------------------------------------------------------------------------


def flex_queued_from_zero(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    """Flex-start and queued pools hold nodes only while a request lasts: GKE creates them on
    demand, so the pool must start empty, let the autoscaler own the count, never repair a node
    (a repair recreates it outside its request) and never consume a reservation (GKE rejects it)."""
    if dig(props, "queuedProvisioning", "enabled") is True:
        what = "queued-provisioning pool"
    elif dig(props, "nodeConfig", "flexStart") is True:
        what = "flex-start pool"
    else:
        return
    auto = props.get("autoscaling")
    if isinstance(auto, Mapping):
        for key in ("totalMinNodeCount", "minNodeCount"):
            floor = as_int(auto.get(key))
            if floor:
                yield f"{what} with autoscaling.{key} {floor}: it must scale from 0, GKE creates its nodes per request"
    elif auto != UNKNOWN:
        yield f"{what} without autoscaling: it must autoscale from 0 (autoscaling.totalMinNodeCount 0)"
    initial = as_int(props.get("initialNodeCount"))
    if initial:
        yield f"{what} with initialNodeCount {initial}: it must start with no nodes"
    fixed = as_int(props.get("nodeCount"))
    if fixed:
        yield f"{what} with a fixed nodeCount {fixed}: the autoscaler owns its size"
    repair = dig(props, "management", "autoRepair")
    if repair is not False and repair != UNKNOWN:
        yield f"{what} with auto-repair on: a repair would recreate a node outside the request it belongs to"
    reservation = dig(props, "nodeConfig", "reservationAffinity", "consumeReservationType")
    if reservation != "NO_RESERVATION" and reservation != UNKNOWN:
        yield (
            f"{what} with reservationAffinity.consumeReservationType {_show(reservation)}: it must be "
            "NO_RESERVATION (GKE rejects flex-start and queued capacity that could consume a reservation)"
        )


def tpu_multihost_slice(type_: str, props: Mapping[str, Any], config: Mapping[str, Any] = EMPTY) -> Iterator[str]:
    """A multi-host TPU pool is one slice: compact placement (a workload policy for tpu7x) with
    the slice topology, in one zone, sized to exactly the slice's VMs."""
    machine_type = dig(props, "nodeConfig", "machineType")
    gen = tpu_generation(machine_type)
    placement = as_dict(props.get("placementPolicy"))
    topology = placement.get("tpuTopology")
    if gen is None or not topology or topology == UNKNOWN:
        return  # not TPU, or single-host: GKE derives the shape from the machine type
    try:
        tslice = catalogue.tpu_slice(gen.version, topology, machine_type)
    except catalogue.CatalogueError as exc:
        yield f"placementPolicy.tpuTopology: {exc}"
        return
    if not tslice.multi_host:
        return
    shape = f"a {gen.version} {topology} slice on {machine_type} is {tslice.vms} VMs"
    kind = placement.get("type")
    if gen.workload_policy:
        if kind not in (None, ""):
            yield (
                f"placementPolicy.type {kind!r}: multi-host {gen.version} pools are placed by a workload policy; "
                "leave type empty (GKE rejects COMPACT for them)"
            )
        if not placement.get("policyName"):
            yield (
                f"multi-host {gen.version} pool without placementPolicy.policyName: name a HIGH_THROUGHPUT "
                f"workload policy with acceleratorTopology {topology}"
            )
    elif kind != "COMPACT":
        yield (
            f"placementPolicy.type is {_show(kind)}: multi-host TPU pools need COMPACT placement so that "
            f"the {tslice.vms} VMs of the slice share the ICI fabric"
        )
    zones = [z for z in as_list(props.get("nodeLocations")) if z != UNKNOWN]
    if len(zones) > 1:
        yield f"nodeLocations lists {len(zones)} zones: a TPU slice lives in exactly one"
    auto = props.get("autoscaling")
    if isinstance(auto, Mapping):
        # Per-zone limits only: the provider sends unset limits as 0, and GKE checks a slice
        # against the per-zone maximum ("Maximum node count 0 is not a valid size of TPU pod
        # slice"; cluster-toolkit modules/compute/gke-node-pool sets min/max_node_count).
        ceiling = as_int(auto.get("maxNodeCount"))
        total = as_int(auto.get("totalMaxNodeCount"))
        if total and not ceiling:
            yield (
                f"autoscaling.totalMaxNodeCount {total} without maxNodeCount: the provider sends "
                "maxNodeCount 0, and GKE rejects it (\"Maximum node count 0 is not a valid size of TPU "
                f"pod slice\"); give per-zone limits (minNodeCount, maxNodeCount {tslice.vms}) instead"
            )
        elif ceiling != tslice.vms and auto.get("maxNodeCount") != UNKNOWN:
            yield f"autoscaling maximum is {_show(ceiling)}; {shape}"
        floor = as_int(auto.get("minNodeCount")) or as_int(auto.get("totalMinNodeCount")) or 0
        if floor not in (0, tslice.vms):
            yield f"autoscaling minimum {floor} is a partial slice, which never runs anything; {shape}"
    elif auto != UNKNOWN:
        count = props.get("nodeCount")
        if count != UNKNOWN and as_int(count) != tslice.vms:
            yield f"nodeCount is {_show(count)}; {shape}"


def _show(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, str) else str(value)
