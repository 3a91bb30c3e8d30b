"""The component package (provider/): the schema Pulumi infers for the hosted components is
the committed one, it has each component's inputs and outputs, and the YAML example uses only
what the schema has, and builds its pools when run through the package's own input mapping."""

from __future__ import annotations

import json
import textwrap

import yaml

from conftest import ROOT, component_schema_text

EXAMPLE = ROOT / "examples" / "yaml" / "Pulumi.yaml"


def _schema():
    return json.loads(component_schema_text())


def test_the_committed_schema_is_the_one_the_components_produce():
    from gke_ai_batch.components.package import SCHEMA_PATH

    assert SCHEMA_PATH.read_text() == component_schema_text(), (
        "provider/schema.json is stale: run python -m gke_ai_batch.components.package"
    )


def test_every_hosted_component_has_its_inputs_and_outputs_under_the_token_it_registers():
    from gke_ai_batch.components.args import type_token
    from gke_ai_batch.components.package import COMPONENTS

    resources = _schema()["resources"]
    assert sorted(resources) == sorted(type_token(c) for c in COMPONENTS)
    tpu = resources["gke-ai-batch:index:TpuSlices"]
    assert {"cluster", "version", "topology", "slices", "capacity", "poolName"} <= set(tpu["inputProperties"])
    assert set(tpu["requiredInputs"]) == {"cluster", "version", "topology"}
    assert set(resources["gke-ai-batch:index:GpuPool"]["requiredInputs"]) == {"cluster", "gpu", "maxNodes"}
    assert set(resources["gke-ai-batch:index:CpuPool"]["requiredInputs"]) == {"cluster", "machineType", "maxNodes"}
    # Only the Outputs: the Python-side plan (flavor, pools, config; a cluster's provider) is no output of the schema.
    # location, project and mode: which cluster the component's provider reaches, and how to judge it.
    shared = {"name", "location", "project", "mode", "endpoint", "apiServer", "kubeconfig", "nodeServiceAccount"}
    outputs = {
        "ResourceFlavor": {"flavorName"},
        "ProvisioningCheck": {"admissionCheck"},
        "ClusterQueue": {"queueName"},
        "Team": {"namespace", "localQueues"},
        "GkeCluster": {*shared, "clusterCaCertificate"},
        "ExistingCluster": shared,
    }
    for kind in ("TpuSlices", "GpuPool", "CpuPool", *outputs):
        assert set(resources[f"gke-ai-batch:index:{kind}"]["properties"]) == outputs.get(kind, {"poolNames", "nodeLabels"}), kind
    assert set(resources["gke-ai-batch:index:GkeCluster"]["requiredInputs"]) == {"name", "location", "project"}
    assert set(resources["gke-ai-batch:index:ExistingCluster"]["requiredInputs"]) == {
        "name", "location", "project", "version", "endpoint", "nodeServiceAccount"
    }
    cluster = _schema()["types"]["gke-ai-batch:index:ClusterRef"]
    assert set(cluster["required"]) == {"name", "location", "project"}


def _example_inputs_in(schema: dict, inputs: dict, props: dict, where: str) -> list[str]:
    """Every key of `inputs` that the schema's `props` lacks, by path, nested types included."""
    missing = []
    for key, value in inputs.items():
        prop = props.get(key)
        if prop is None:
            missing.append(f"{where}.{key}")
            continue
        ref = prop.get("$ref", "")
        if ref.startswith("#/types/") and isinstance(value, dict):
            nested = schema["types"][ref[len("#/types/") :]]["properties"]
            missing += _example_inputs_in(schema, value, nested, f"{where}.{key}")
    return missing


def test_the_yaml_example_uses_only_tokens_inputs_and_outputs_the_schema_has():
    schema = _schema()
    example = yaml.safe_load(EXAMPLE.read_text())
    assert example["packages"] == {"gke-ai-batch": "../../provider"}
    assert (EXAMPLE.parent / example["packages"]["gke-ai-batch"] / "PulumiPlugin.yaml").is_file()
    for name, resource in example["resources"].items():
        assert resource["type"] in schema["resources"], name
        spec = schema["resources"][resource["type"]]
        assert _example_inputs_in(schema, resource["properties"], spec["inputProperties"], name) == []
        assert set(spec["requiredInputs"]) <= set(resource["properties"])
    for output in example["outputs"].values():
        name, prop = output.strip("${}").split(".")
        assert prop in schema["resources"][example["resources"][name]["type"]]["properties"], output


def test_the_yaml_example_builds_its_slices_through_the_packages_input_mapping(tmp_path):
    from gke_ai_batch.synth import engine

    program = tmp_path / "__main__.py"
    program.write_text(textwrap.dedent(f"""
        import yaml
        from gke_ai_batch.components.package import provider as hosted

        provider = hosted()
        example = yaml.safe_load(open({str(EXAMPLE)!r}).read().replace("${{gcp:project}}", "acme-ml"))
        for name, resource in example["resources"].items():
            component = resource["type"].rsplit(":", 1)[-1]
            # What the provider's construct does with the inputs a YAML program sends.
            args = provider.map_inputs(resource["properties"], provider._component_defs[component])
            provider._components[component](name, args)
    """))
    recording = engine.run(program, project="example", stack="test", config={}, outputs_for=lambda t, n, i: {})
    pools = sorted(r.name for r in recording.resources if r.type == "gcp:container/nodePool:NodePool")
    assert pools == ["v6e-0", "v6e-1"]
    (component,) = [r for r in recording.resources if r.type == "gke-ai-batch:index:TpuSlices"]
    assert component.options["aliases"] == [{"type": "gke-ai-batch:nodepools:NodePoolGroup"}]


def test_resources_json_records_the_programs_aliases_not_a_provider_sdks_own():
    from conftest import synth_stack

    resources = synth_stack("gpu-dws").recording.resources
    accounts = [r for r in resources if r.type == "gcp:serviceaccount/account:Account"]
    # pulumi_gcp's Account carries Alias(type_="gcp:serviceAccount/account:Account") itself.
    assert accounts and not any("aliases" in r.options for r in accounts)
    groups = [r for r in resources if r.type in {"gke-ai-batch:index:GpuPool", "gke-ai-batch:index:CpuPool", "gke-ai-batch:index:TpuSlices"}]
    assert groups and all(r.options["aliases"] == [{"type": "gke-ai-batch:nodepools:NodePoolGroup"}] for r in groups)
    cluster = [r for r in resources if r.type == "gke-ai-batch:index:GkeCluster"]
    assert [r.options["aliases"] for r in cluster] == [[{"type": "gke-ai-batch:cluster:GkeCluster"}]]


def test_every_property_of_the_committed_schema_is_described_and_the_version_is_the_librarys():
    # A consumer in TypeScript, Go or YAML reads the schema's descriptions in the SDK Pulumi
    # generates from it; an inherited field or a base class's output used to lose its docstring.
    import tomllib

    schema = json.loads((ROOT / "provider" / "schema.json").read_text())
    bare = [
        f"{token}.{kind}.{name}"
        for token, resource in schema["resources"].items()
        for kind in ("inputProperties", "properties")
        for name, prop in resource.get(kind, {}).items()
        if not prop.get("description")
    ] + [
        f"{token}.{name}" for token, typ in schema["types"].items()
        for name, prop in typ.get("properties", {}).items() if not prop.get("description")
    ]
    assert bare == []
    # Descriptions are cleaned of their source indentation.
    assert not [p for r in schema["resources"].values() for p in r.get("inputProperties", {}).values()
                if "\n    " in p.get("description", "")]
    assert schema["version"] == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"] != "0.0.0"


def test_the_hosted_provider_refuses_an_input_its_schema_does_not_declare():
    # A YAML or TypeScript program reaches the component through the provider's input mapping,
    # which used to drop a misspelt key before the component's own check could see it.
    from pulumi.errors import InputPropertyError
    import pytest

    from gke_ai_batch.components.package import provider as hosted

    provider = hosted()
    definition = provider._component_defs["TpuSlices"]
    ref = {"name": "ml", "location": "us-central1", "project": "acme-ml"}
    with pytest.raises(InputPropertyError) as top:
        provider.map_inputs({"cluster": ref, "version": "v6e", "topology": "4x4", "slice": 2}, definition)
    assert "Unknown input 'slice' on 'TpuSlices' (did you mean 'slices'?)" in str(top.value)
    with pytest.raises(InputPropertyError) as nested:
        provider.map_inputs({"cluster": {**ref, "nodeLocation": ["us-central1-b"]}, "version": "v6e", "topology": "4x4"}, definition)
    assert "Unknown input 'cluster.nodeLocation'" in str(nested.value) and "nodeLocations" in str(nested.value)
    mapped = provider.map_inputs({"cluster": ref, "version": "v6e", "topology": "4x4", "slices": 2}, definition)
    assert mapped["slices"] == 2 and mapped["cluster"]["location"] == "us-central1"


def test_a_kueue_install_from_yaml_or_typescript_keeps_its_camelcase_mapping_args(tmp_path):
    # The provider's input mapping renames a typed arg's keys (multi_kueue) but hands an arg
    # typed Any (wait_for_pods_ready, fair_sharing: a mapping or a boolean) on as the program
    # wrote it, camelCase; KueueInstall reads those by its models' aliases. A misspelt key in
    # one is still refused, named as written.
    from gke_ai_batch.synth import engine

    program = tmp_path / "__main__.py"
    program.write_text(textwrap.dedent("""
        import pulumi
        from gke_ai_batch.components.package import provider as hosted
        from gke_ai_batch.config.errors import ArgsError

        provider = hosted()
        inputs = {
            "version": "0.19.2",
            "waitForPodsReady": {"timeout": "1h", "blockAdmission": True},
            "fairSharing": {"preemptionStrategies": ["LessThanInitialShare"]},
            "multiKueue": {"dispatcher": "Incremental", "incrementalStepSize": 2.0, "gcInterval": "2m"},
        }
        definition = provider._component_defs["KueueInstall"]
        args = provider.map_inputs(inputs, definition)
        provider._components["KueueInstall"]("kueue", args)
        try:
            provider._components["KueueInstall"]("typo", provider.map_inputs({"waitForPodsReady": {"blockAdmision": True}}, definition))
        except ArgsError as exc:
            pulumi.export("refused", str(exc))
    """))
    recording = engine.run(program, project="example", stack="test", config={}, outputs_for=lambda t, n, i: {})
    (release,) = [r for r in recording.resources if r.type == "kubernetes:helm.sh/v3:Release"]
    text = release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"]
    for setting in ("blockAdmission: true", "timeout: 1h", "- LessThanInitialShare", "stepSize: 2\n"):
        assert setting in text, (setting, text)
    assert recording.outputs["refused"].startswith(
        "KueueInstall typo: args.wait_for_pods_ready.blockAdmision: unknown arg (did you mean 'block_admission'?)")
