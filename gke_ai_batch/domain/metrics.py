"""What Google Cloud Managed Service for Prometheus (GMP) scrapes, and the metric names a
dashboard reads: facts of Kueue v0.19.2, JobSet v0.12.0, GMP v0.17.2 and GKE, each with its
source. Standard library only.

Kueue and JobSet serve /metrics over HTTPS on the manager container's port named `metrics`
(8443), behind controller-runtime's authentication and authorization filter: a scrape must
carry a bearer token whose identity may `get` the non-resource URL /metrics
(kubernetes-sigs/kueue v0.19.2 cmd/kueue/main.go:188-192, SecureServing and
filters.WithAuthenticationAndAuthorization; charts/kueue/templates/manager/manager.yaml:79-81;
kubernetes-sigs/jobset v0.12.0 main.go:181-182; charts/jobset/templates/controller/deployment.yaml:84-86).
The certificate is self-signed unless cert-manager is used (Kueue's chart's own ServiceMonitor
sets insecureSkipVerify: charts/kueue/values.yaml `metrics.serviceMonitor.tlsConfig`)."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Scraped:
    """A controller whose metrics GMP collects: the pods' labels, port name and path."""

    what: str
    pod_labels: MappingProxyType
    port: str = "metrics"
    path: str = "/metrics"


# The pods' own labels that do not depend on the Helm release name, so that a Kueue or JobSet
# installed by someone else under another release name is selected too (Kueue v0.19.2
# charts/kueue/templates/_helpers.tpl:64-68 kueue.selectorLabels; JobSet v0.12.0
# charts/jobset/templates/controller/_helpers.tpl jobset.controller.selectorLabels and
# _helpers.tpl:65-68).
KUEUE = Scraped("Kueue", MappingProxyType({"app.kubernetes.io/name": "kueue", "control-plane": "controller-manager"}))
JOBSET = Scraped("JobSet", MappingProxyType({"app.kubernetes.io/name": "jobset", "app.kubernetes.io/component": "controller"}))

# GMP's collectors read a scrape's credentials Secret with their own service account (the
# collector's --enable-feature=google-kubernetes-secret-provider, GoogleCloudPlatform/
# prometheus-engine v0.17.2 manifests/operator.yaml), so each Secret needs a Role binding for
# it: `collector` in gmp-system on Standard, in gke-gmp-system where GKE runs managed collection
# on Autopilot (GKE docs stackdriver/docs/managed-prometheus/setup-managed, "Authorization").
COLLECTORS = (("gmp-system", "collector"), ("gke-gmp-system", "collector"))
# Every PodMonitoring endpoint must state its interval (the CRD's endpoints[].required).
SCRAPE_INTERVAL = "30s"

# Kueue v0.19.2 pkg/metrics/metrics.go (Subsystem "kueue"): pending_workloads{cluster_queue,
# status=active|inadmissible} :413-419, admitted_active_workloads{cluster_queue} :757,
# cluster_queue_resource_usage and cluster_queue_nominal_quota{cluster_queue,flavor,resource}
# :831, :869. The last two only with the Configuration's metrics.enableClusterQueueResources
# (apis/config/v1beta2/configuration_types.go:182-185; cmd/kueue/main.go:303).
KUEUE_PENDING = "kueue_pending_workloads"
KUEUE_ADMITTED_ACTIVE = "kueue_admitted_active_workloads"
KUEUE_RESOURCE_USAGE = "kueue_cluster_queue_resource_usage"
KUEUE_NOMINAL_QUOTA = "kueue_cluster_queue_nominal_quota"
# GKE's managed DCGM package exports DCGM-Exporter's fields (GKE docs how-to/dcgm-metrics,
# "DCGM metrics"), GPU utilization among them; TPU duty cycle is a GKE system metric
# (kubernetes.io/node/accelerator/duty_cycle), which PromQL in Cloud Monitoring names with ':'
# for '/' and '.' (Cloud Monitoring docs "PromQL for Cloud Monitoring metrics").
DCGM_GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
TPU_DUTY_CYCLE = "kubernetes_io:node_accelerator_duty_cycle"

# monitoring_config.enable_components replaces GKE's list rather than adding to it (GKE REST
# MonitoringComponentConfig.enableComponents), so it restates what a new cluster collects by
# default: system metrics and the kube state and cAdvisor/Kubelet packages (GKE docs how-to/
# configure-metrics, "Available metrics packages"); DCGM is added where asked. The values are
# the provider's (pulumi-gcp ClusterMonitoringConfig.enable_components: "KUBELET and CADVISOR
# are only supported in GKE 1.29.3-gke.1093000 and above", below every minor a channel offers).
DEFAULT_COMPONENTS = (
    "SYSTEM_COMPONENTS",
    "STORAGE",
    "HPA",
    "POD",
    "DAEMONSET",
    "DEPLOYMENT",
    "STATEFULSET",
    "CADVISOR",
    "KUBELET",
)
DCGM_COMPONENT = "DCGM"
