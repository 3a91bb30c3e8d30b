"""Kueue and JobSet installed already on an existing cluster (`installed: V`): no Helm release,
no webhook probe, the Kueue objects still made; V checked against what the objects need."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import ROOT, synth_config
from support.diagnostics import assert_names
from test_existing_cluster import refused

NS = "gke-ai-batch"
STACK_FILE = ROOT / "stacks" / "Pulumi.existing-cluster.yaml"


def existing(**keys) -> dict:
    config = copy.deepcopy(yaml.safe_load(STACK_FILE.read_text())["config"])
    for key, value in keys.items():
        config[f"{NS}:{key}"] = value
    return config


def test_installed_kueue_and_jobset_register_no_release_and_keep_the_kueue_objects(tmp_path):
    result = synth_config(tmp_path, existing(kueue={"installed": "0.19.2"}, jobset={"installed": "0.12.0"}))
    assert result.exit_code == 0, result.error
    types = {r.type for r in result.recording.resources}
    assert "kubernetes:helm.sh/v3:Release" not in types
    assert not any(t.startswith(("gke-ai-batch:index:KueueInstall", "gke-ai-batch:index:JobSetInstall")) for t in types)
    assert not any("webhook-probe" in r.name for r in result.recording.resources)
    for kind in ("ResourceFlavor", "ClusterQueue", "LocalQueue", "AdmissionCheck"):
        assert f"kubernetes:kueue.x-k8s.io/v1beta2:{kind}" in types, kind
    # The sample JobSet waits for its namespace and queue, not for an install that is not there.
    jobset = next(r for r in result.recording.resources if r.type == "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet")
    assert jobset.dependencies and not any("Release" in d for d in jobset.dependencies)


def test_installed_jobset_alone_leaves_the_kueue_install(tmp_path):
    result = synth_config(tmp_path, existing(jobset={"installed": "0.12.0"}))
    assert result.exit_code == 0, result.error
    releases = [r for r in result.recording.resources if r.type == "kubernetes:helm.sh/v3:Release"]
    assert [r.name for r in releases] == ["kueue"] and releases[0].dependencies == []


def test_installed_is_only_for_an_existing_cluster(tmp_path):
    config = existing(kueue={"installed": "0.19.2"}, jobset={"installed": "0.12.0"})
    cluster = config[f"{NS}:cluster"]
    del cluster["existing"], cluster["version"], cluster["endpoint"], cluster["nodeServiceAccount"]
    result = synth_config(tmp_path, config)
    assert result.exit_code == 2, result.error
    for key in ("kueue", "jobset"):
        assert_names(result.error, tmp_path / "Pulumi.test.yaml", f"{NS}:{key}.installed", "only on an existing cluster")


@pytest.mark.parametrize(
    "kueue, path, words",
    [
        # No v1beta2 before 0.15.0: every Kueue object the stack makes would be refused.
        ({"installed": "0.14.2"}, "kueue.installed", "Kueue 0.14.2 is too old: the project emits kueue.x-k8s.io/v1beta2"),
        ({"installed": "v0.19.2"}, "kueue.installed", "is not a pinned Kueue chart version"),
        ({"installed": "0.19.2", "version": "0.19.2"}, "kueue.version", "Kueue is installed already (installed: 0.19.2)"),
        ({"installed": "0.19.2", "webhookGate": True}, "kueue.webhookGate", "so nothing installs it; remove webhookGate"),
        # The installed release's rules still hold: it has no rayservice integration before 0.17.
        ({"installed": "0.16.0", "integrations": ["batch/job", "jobset.x-k8s.io/jobset", "ray.io/rayservice"]},
         "kueue.integrations[2]", "Kueue 0.16.0 has no integration ray.io/rayservice"),
    ],
)
def test_the_installed_release_is_checked(tmp_path, kueue, path, words):
    refused(tmp_path, existing(kueue=kueue), f"{NS}:{path}", words)


def test_an_installed_jobset_with_a_version_is_refused(tmp_path):
    refused(tmp_path, existing(jobset={"installed": "0.12.0", "version": "0.12.0"}), f"{NS}:jobset.version",
            "JobSet is installed already")
