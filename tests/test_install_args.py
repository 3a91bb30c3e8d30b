"""The install components' args (KueueInstall, JobSetInstall, Priorities, ComputeClasses,
Topologies, Metrics, CheckpointBucket) are validated by their keys' config models by field name:
a camelCase key is refused where it was written, however deep, and a rule the stack file runs
on the same key refuses the args with the stack file's message."""

from __future__ import annotations

import pytest

from conftest import base_config
from gke_ai_batch.config import ConfigError, load
from gke_ai_batch.config.errors import ArgsError


def _refusal(make) -> list[tuple[str, str]]:
    with pytest.raises(ArgsError) as refused:
        make()
    return refused.value.problems


def _components():
    from gke_ai_batch.components.batch import KueueInstall
    from gke_ai_batch.components.computeclasses import ComputeClasses
    from gke_ai_batch.components.metrics import Metrics
    from gke_ai_batch.components.priorities import Priorities
    from gke_ai_batch.components.storage import CheckpointBucket
    from gke_ai_batch.components.topology import Topologies

    return {c.__name__: c for c in (KueueInstall, ComputeClasses, Metrics, Priorities, CheckpointBucket, Topologies)}


BUCKET = {"bucket": "b-ckpt", "location": "us-central1", "project": "acme-ml", "project_number": "123", "namespace": "team-a"}


@pytest.mark.parametrize(
    "component, args, path, hint",
    [
        ("KueueInstall", {"manageJobsWithoutQueueName": True}, "args.manageJobsWithoutQueueName", "manage_jobs_without_queue_name"),
        # A typed arg's mapping: the component package renames its keys, so a camelCase one here
        # is a Python caller's mistake (it used to be read as if snake_case).
        ("KueueInstall", {"multi_kueue": {"gcInterval": "1m"}}, "args.multi_kueue.gcInterval", "gc_interval"),
        ("ComputeClasses", {"classes": [{"name": "c", "priorities": [{"machineType": "n2-standard-8"}]}]},
         "args.classes[0].priorities[0].machineType", "machine_type"),
        ("ComputeClasses", {"classes": [{"name": "c", "priorities": [{"gpu": {"type": "nvidia-l4", "driverVersion": "latest"}}]}]},
         "args.classes[0].priorities[0].gpu.driverVersion", "driver_version"),
        ("ComputeClasses", {"classes": [{"name": "c", "whenUnsatisfiable": "ScaleUpAnyway", "priorities": [{"machine_type": "n2-standard-8"}]}]},
         "args.classes[0].whenUnsatisfiable", "when_unsatisfiable"),
        ("Metrics", {"cluster_name": "ml", "gpuPools": ["a100"]}, "args.gpuPools", "gpu_pools"),
        ("CheckpointBucket", {**BUCKET, "softDeleteDays": 0}, "args.softDeleteDays", "soft_delete_days"),
    ],
)
def test_a_camelcase_arg_is_refused_at_its_arg_path(component, args, path, hint):
    (where, message), *_ = _refusal(lambda: _components()[component]("x", args))
    assert where == path and message.startswith(f"unknown arg (did you mean {hint!r}?); known: "), (where, message)


@pytest.mark.parametrize(
    "key, value, component, args, pairs",
    [
        # Kueue's release lacks the integration: the stack's check and KueueInstall's, one function.
        ("kueue", {"version": "0.16.0", "integrations": ["ray.io/rayservice"]},
         "KueueInstall", {"version": "0.16.0", "integrations": ["ray.io/rayservice"]},
         [("kueue.integrations[0]", "integrations[0]")]),
        ("priorities", [{"name": "low", "value": 10}, {"name": "high", "value": 5}, {"name": "high", "value": 7}],
         "Priorities", {"priorities": [{"name": "low", "value": 10}, {"name": "high", "value": 5}, {"name": "high", "value": 7}]},
         [("priorities[2].name", "priorities[2].name"), ("priorities[0].value", "priorities[0].value")]),
        ("priorities", [{"name": "system-x", "value": 1}], "Priorities", {"priorities": [{"name": "system-x", "value": 1}]},
         [("priorities[0].name", "priorities[0].name")]),
        ("topologies", [{"name": "t", "levels": ["kubernetes.io/hostname"]}, {"name": "t", "levels": ["a", "a"]}],
         "Topologies", {"topologies": [{"name": "t", "levels": ["kubernetes.io/hostname"]}, {"name": "t", "levels": ["a", "a"]}]},
         [("topologies[1].levels[1]", "topologies[1].levels[1]")]),
        ("topologies", [{"name": "t", "levels": ["kubernetes.io/hostname"]}, {"name": "t", "levels": ["a"]}],
         "Topologies", {"topologies": [{"name": "t", "levels": ["kubernetes.io/hostname"]}, {"name": "t", "levels": ["a"]}]},
         [("topologies[1].name", "topologies[1].name")]),
        ("computeClasses",
         [{"name": "c", "priorities": [{"machineType": "n2-standard-8"}]}, {"name": "c", "priorities": [{"machineType": "n2-standard-8"}]}],
         "ComputeClasses",
         {"classes": [{"name": "c", "priorities": [{"machine_type": "n2-standard-8"}]}, {"name": "c", "priorities": [{"machine_type": "n2-standard-8"}]}]},
         [("computeClasses[1].name", "classes[1].name")]),
        ("computeClasses", [{"name": "c", "priorities": [{"machineType": "n2-standard-8", "localSsdCount": -1}]}],
         "ComputeClasses", {"classes": [{"name": "c", "priorities": [{"machine_type": "n2-standard-8", "local_ssd_count": -1}]}]},
         [("computeClasses[0].priorities[0].localSsdCount", "classes[0].priorities[0].local_ssd_count")]),
        ("metrics", {"managedPrometheus": False, "dcgm": False, "tpu": False},
         "Metrics", {"cluster_name": "test", "managed_prometheus": False, "dcgm": False, "tpu": False},
         [("metrics.dashboard", "dashboard")]),
    ],
)
def test_the_component_and_the_stack_file_refuse_with_the_same_message(key, value, component, args, pairs):
    with pytest.raises(ConfigError) as stack:
        load({k.removeprefix("gke-ai-batch:"): v for k, v in base_config(**{key: value}).items() if k.startswith("gke-ai-batch:")},
             region="us-central1", project="test-project")
    said = dict(stack.value.problems)
    component_said = dict(_refusal(lambda: _components()[component]("x", args)))
    for stack_path, arg_path in pairs:
        message = said[f"gke-ai-batch:{stack_path}"]
        assert component_said[f"args.{arg_path}"] == message, (stack_path, said)
    assert len(component_said) == len(pairs), component_said
