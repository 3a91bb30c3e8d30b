"""The Google Cloud APIs the stack's projects need, enabled as gcp.projects.Service resources
(the list and the reasons: gke_ai_batch/plan/apis.py), once per project however many clusters
share it."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.domain.naming import scoped
from gke_ai_batch.plan import Plan
from gke_ai_batch.plan.apis import in_project, resource_name


def enable_apis(plans: Sequence[Plan], home: str, scope: str = "") -> dict[str, list[gcp.projects.Service]]:
    """project -> its Service resources, for every project of `plans`; `home` is the stack's
    project (gcp:project), whose resources keep the short names; `scope`, as deploy()'s
    (gke_ai_batch.domain.naming.scoped), is "" but for a program that deploys one plan several times.

    disable_on_destroy and disable_dependent_services are false: a destroy, or a stack that
    stops needing an API, leaves the API on. Turning an API off stops everything else in the
    project that uses it, this stack's or not (pulumi-gcp projects.Service: disableOnDestroy
    "If true, disable the service when the Terraform resource is destroyed"), and enabling an
    enabled API again is a no-op, so nothing here needs protecting either."""
    wanted: dict[str, list[str]] = {}
    for plan in plans:
        have = wanted.setdefault(plan.project, [])
        have.extend(a for a in plan.apis if a not in have)
    return {project: ProjectApis(project, apis, home, scope).services for project, apis in wanted.items()}


class ProjectApis(pulumi.ComponentResource):
    """One project's enabled APIs. Its children keep names distinct across projects (a URN
    carries the parent's type, not its name): api-<name> at home, <project>/api-<name> elsewhere."""

    def __init__(self, project: str, apis: Sequence[str], home: str, scope: str = ""):
        super().__init__("gke-ai-batch:project:ProjectApis", scoped(scope, in_project("apis", project, home)), None)
        child = pulumi.ResourceOptions(parent=self)
        self.services: list[gcp.projects.Service] = [
            gcp.projects.Service(
                scoped(scope, resource_name(api, project, home)),
                project=project,
                service=api,
                disable_on_destroy=False,
                disable_dependent_services=False,
                opts=child,
            )
            for api in apis
        ]
        self.register_outputs({})
