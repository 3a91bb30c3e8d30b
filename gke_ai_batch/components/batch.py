"""JobSet and Kueue, installed from their official OCI charts at pinned versions.

`helm.v3.Release`, not `helm.v4.Chart`: on the first `pulumi up` of a new environment the
cluster does not exist yet and the kubeconfig is unknown. Release renders its chart client-side
during preview and needs no cluster (pulumi-kubernetes PR #1886, v3.15.0); Chart v4 is expanded
by the provider, which fails preview with "failed to parse kubeconfig data"
(pulumi-kubernetes issue #3027). The release names are fixed (`jobset`, `kueue`): an
auto-named release would rename Kueue's webhook service and certificates."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.domain.naming import scoped
from gke_ai_batch.plan import Plan
from gke_ai_batch.plan.kueue import JOBSET_CHART, JOBSET_NAMESPACE, KUEUE_CHART, KUEUE_NAMESPACE

RELEASE_TIMEOUT_SECONDS = 600


def _release(
    name: str, chart: str, version: str, namespace: str, values: dict, opts: pulumi.ResourceOptions, scope: str
):
    return k8s.helm.v3.Release(
        scoped(scope, name),
        name=name,
        chart=chart,
        version=version,
        namespace=namespace,
        create_namespace=True,
        values=values,
        # Helm --wait: the release is done when its Deployments are available.
        skip_await=False,
        timeout=RELEASE_TIMEOUT_SECONDS,
        cleanup_on_fail=True,
        opts=opts,
    )


class JobSetInstall(pulumi.ComponentResource):
    def __init__(
        self,
        resource_name: str,
        plan: Plan,
        provider: k8s.Provider,
        opts: pulumi.ResourceOptions | None = None,
        *,
        scope: str = "",
    ):
        super().__init__("gke-ai-batch:batch:JobSet", resource_name, None, opts)
        self.release = _release(
            "jobset",
            JOBSET_CHART,
            plan.config.jobset.version,
            JOBSET_NAMESPACE,
            {},
            pulumi.ResourceOptions(parent=self, provider=provider),
            scope,
        )
        self.register_outputs({"version": self.release.version, "namespace": JOBSET_NAMESPACE})


class KueueInstall(pulumi.ComponentResource):
    """Kueue with its manager configuration from the stack, then (by default) a probe that
    holds back every Kueue object and workload until Kueue's webhooks answer.

    `ready` is what those objects depend on."""

    def __init__(
        self,
        resource_name: str,
        plan: Plan,
        provider: k8s.Provider,
        after: list[pulumi.Resource],
        image_access: list[pulumi.Resource] | None = None,
        opts: pulumi.ResourceOptions | None = None,
        *,
        scope: str = "",
    ):
        """`image_access`: what the probe Pod must wait for to pull its image (the node
        service account's Artifact Registry grant, when the probe image is on one)."""
        super().__init__("gke-ai-batch:batch:Kueue", resource_name, None, opts)
        self.release = _release(
            "kueue",
            KUEUE_CHART,
            plan.config.kueue.version,
            KUEUE_NAMESPACE,
            plan.kueue_values,
            pulumi.ResourceOptions(parent=self, provider=provider, depends_on=after),
            scope,
        )
        self.ready: list[pulumi.Resource] = [self.release]
        previous: list[pulumi.Resource] = [self.release, *after, *(image_access or [])]
        for manifest in plan.webhook_probe:
            previous = [
                k8s_objects.apply(
                    manifest, pulumi.ResourceOptions(parent=self, provider=provider, depends_on=previous), scope=scope
                )
            ]
        if plan.webhook_probe:
            self.ready = [self.release, *previous]
        self.register_outputs({"version": self.release.version, "namespace": KUEUE_NAMESPACE})
