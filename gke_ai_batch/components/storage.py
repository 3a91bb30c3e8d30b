"""Checkpoint storage as a component any Pulumi program can use: CheckpointBucket(name, args,
opts) registers a team's Cloud Storage bucket (uniform bucket-level access, public access
prevention enforced, soft delete, an optional age limit), the Kubernetes service account in the
team's namespace, and one grant: roles/storage.objectUser on that bucket for that service
account's Workload Identity principal, nothing wider (no project role, no allUsers), set as the
bucket's whole IAM policy so that the project's viewers, editors and owners get nothing on it.

Args are checked on construction by the stack's own rules (gke_ai_batch/config/checkpoints.py),
every problem at once, at its arg path. The Kubernetes provider comes from `opts`; the bucket and
its grant use the Google Cloud provider. What `opts.depends_on` lists (the team's namespace, the
project's APIs), each child waits for.

No `from __future__ import annotations`: Pulumi's component analyzer reads these annotations
as objects."""

import json
from typing import NotRequired, TypedDict

import pulumi
import pulumi_gcp as gcp
from pydantic import TypeAdapter, ValidationError

from gke_ai_batch.components.component import Component
from gke_ai_batch.components import k8s as k8s_objects
from gke_ai_batch.components.args import depends_on_of, not_strings, outputs_in, project_problems, type_token, unknown_keys, validated, whole_numbers
from gke_ai_batch.config.base import K8sName
from gke_ai_batch.config.checkpoints import CheckpointsConfig, bucket_name_problem
from gke_ai_batch.config.errors import ArgsError, at_arg
from gke_ai_batch.domain import gcsfuse, regions
from gke_ai_batch.domain.naming import child_name
from gke_ai_batch.plan.checkpoints import BucketPlan

_ADAPTER_K8S_NAME = TypeAdapter(K8sName)


class CheckpointBucketArgs(TypedDict):
    bucket: str
    """The bucket's name, global across Cloud Storage: 3 to 63 of a-z, 0-9, '-', '_'."""
    location: str
    """The cluster's region, e.g. us-central1: a pod reads and writes its checkpoints there."""
    project: str
    """The project of the bucket and of the cluster (its Workload Identity pool is <project>.svc.id.goog)."""
    project_number: str
    """That project's number (gcloud projects describe PROJECT --format='value(projectNumber)')."""
    namespace: str
    """The team's namespace, where the Kubernetes service account is created."""
    service_account: NotRequired[str]
    """The Kubernetes service account the team's pods run as; default checkpoints."""
    soft_delete_days: NotRequired[int]
    """Days a deleted or overwritten object stays restorable: 0 (off) or 7 to 90; default 7."""
    delete_after_days: NotRequired[int]
    """Delete objects this many days after they were written; unset: keep them."""


def _checked(name: str, args: CheckpointBucketArgs) -> BucketPlan:
    where = f"CheckpointBucket {name}"
    if not isinstance(args, dict):
        raise ArgsError(where, [at_arg("args", f"must be a mapping of CheckpointBucketArgs, not {type(args).__name__}")])
    # Numbers from a program in another language arrive as floats (args.whole_numbers).
    args = whole_numbers(args)
    problems = unknown_keys(args, CheckpointBucketArgs, "args")
    problems += [at_arg(f"args.{k}", "required") for k in sorted(CheckpointBucketArgs.__required_keys__) if k not in args]
    problems += outputs_in(args)
    # The names the bucket and its grant are made with: a number would reach GCP as one. The
    # project also names the Workload Identity pool (<project>.svc.id.goog) of the one principal granted.
    problems += project_problems(args, "args", False) + not_strings(args, "args", ("bucket", "location"), ())
    if problems:
        raise ArgsError(where, problems)
    # The args the stack's checkpoints key also holds, judged by its model.
    settings = ("project_number", "service_account", "soft_delete_days", "delete_after_days")
    config, found = validated(CheckpointsConfig, {k: v for k, v in args.items() if k in settings})
    problems += found
    problem = bucket_name_problem(args["bucket"])
    if problem:
        problems.append(at_arg("args.bucket", f"{args['bucket']!r} {problem}"))
    if not regions.REGION_RX.fullmatch(args["location"].lower()):
        # The bucket is regional, in the cluster's region, where its pods read and write it
        # (Cloud Storage takes a location in either case and stores it upper-case).
        problems.append(at_arg("args.location", f"{args['location']!r} is not a region such as us-central1 (the cluster's region)"))
    try:
        _ADAPTER_K8S_NAME.validate_python(args["namespace"])
    except ValidationError as exc:
        problems.append(at_arg("args.namespace", exc.errors()[0]["msg"]))
    if problems or config is None:
        raise ArgsError(where, problems)
    return BucketPlan(
        namespace=args["namespace"],
        bucket=args["bucket"],
        location=args["location"].upper(),
        project=args["project"],
        project_number=config.project_number,
        service_account=config.service_account,
        soft_delete_days=config.soft_delete_days,
        delete_after_days=config.delete_after_days,
    )


def bucket_args(plan: BucketPlan) -> dict:
    """pulumi-gcp storage.Bucket's arguments for a checkpoint bucket."""
    args: dict = {
        "name": plan.bucket,
        "project": plan.project,
        "location": plan.location,
        # IAM alone decides access (no object ACLs), and no grant can make it public
        # (https://cloud.google.com/storage/docs/uniform-bucket-level-access,
        # https://cloud.google.com/storage/docs/public-access-prevention).
        "uniform_bucket_level_access": True,
        "public_access_prevention": "enforced",
        # A checkpoint a run overwrote or deleted by mistake stays restorable this long.
        "soft_delete_policy": {"retention_duration_seconds": plan.soft_delete_days * gcsfuse.DAY_SECONDS},
        # A bucket holding checkpoints is never emptied by `pulumi destroy`.
        "force_destroy": False,
    }
    if plan.delete_after_days is not None:
        args["lifecycle_rules"] = [{"action": {"type": "Delete"}, "condition": {"age": plan.delete_after_days}}]
    return args


class CheckpointBucket(Component):
    """A team's checkpoint bucket, its Kubernetes service account, and the one IAM grant that
    lets pods running as that account (and nothing else) read and write it."""

    bucket_name: pulumi.Output[str]
    """The bucket's name."""
    member: pulumi.Output[str]
    """The one principal granted roles/storage.objectUser on it."""

    def __init__(self, name: str, args: CheckpointBucketArgs, opts: pulumi.ResourceOptions | None = None):
        plan = _checked(name, args)
        super().__init__(type_token(type(self)), name, None, opts)
        base = f"{plan.namespace}-checkpoints"
        waits = depends_on_of(opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=waits)
        self.bucket = gcp.storage.Bucket(child_name(name, base, plan.bucket), **bucket_args(plan), opts=child)
        account = plan.service_account_manifest
        self.service_account = k8s_objects.apply(
            account, child, name=child_name(name, base, k8s_objects.resource_name(account))
        )
        # roles/storage.objectUser on this bucket alone, for this one service account's
        # principal: gke_ai_batch/domain/gcsfuse.py says why that role, and its
        # workload_identity_member the principal's form.
        self.grant = gcp.storage.BucketIAMMember(
            child_name(name, base, f"{plan.bucket}-object-user"),
            bucket=self.bucket.name,
            role=gcsfuse.OBJECT_USER_ROLE,
            member=plan.member,
            opts=pulumi.ResourceOptions(parent=self, depends_on=waits),
        )
        # The bucket's whole policy, set authoritatively to that one grant: Cloud Storage gives a
        # new bucket bindings for the project's viewers, editors and owners
        # (gcsfuse.CONVENIENCE_BINDINGS), through which anyone with roles/viewer on the project
        # (a CI preview identity, say) could list and read every checkpoint. The member grant
        # stays beside it, so a bucket made before the policy never loses the team's access on
        # the way (deleting it would take the binding out after the policy set it); both say
        # the same thing, so neither undoes the other.
        self.policy = gcp.storage.BucketIAMPolicy(
            child_name(name, base, f"{plan.bucket}-policy"),
            bucket=self.bucket.name,
            policy_data=json.dumps(gcsfuse.only_policy(gcsfuse.OBJECT_USER_ROLE, plan.member), sort_keys=True),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*waits, self.grant]),
        )
        self.bucket_name = self.bucket.name
        self.member = pulumi.Output.from_input(plan.member)
        self.register_outputs({"bucketName": self.bucket_name, "member": self.member})


def stack_bucket_args(plan: BucketPlan) -> CheckpointBucketArgs:
    """CheckpointBucket's args for one bucket of a stack's plan."""
    args: CheckpointBucketArgs = {
        "bucket": plan.bucket,
        "location": plan.location,
        "project": plan.project,
        "project_number": plan.project_number,
        "namespace": plan.namespace,
        "service_account": plan.service_account,
        "soft_delete_days": plan.soft_delete_days,
    }
    if plan.delete_after_days is not None:
        args["delete_after_days"] = plan.delete_after_days
    return args
