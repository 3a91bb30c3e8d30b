"""The GitHub Actions workflows: valid against GitHub's schema, and the properties that keep them safe.

Schema validation uses check-jsonschema's vendored copies of the SchemaStore schemas
(`--builtin-schema`), which ship inside the package: nothing is fetched, so this runs offline.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from conftest import ROOT, STACKS

GITHUB = ROOT / ".github"
WORKFLOWS = sorted((GITHUB / "workflows").glob("*.y*ml"))
ACTIONS = sorted((GITHUB / "actions").glob("*/action.y*ml"))

# Loaded by path under its own name: .github/scripts is not a package, and "stacks" is too common a
# module name to put on sys.path.
_spec = importlib.util.spec_from_file_location("gha_stacks_script", GITHUB / "scripts" / "stacks.py")
stacks_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stacks_script)

# Third-party actions and the major version each is pinned to.
PINNED = {
    "actions/checkout": 4,
    "actions/setup-python": 5,
    "actions/upload-artifact": 4,
    "actions/download-artifact": 4,
    "actions/github-script": 7,
    "google-github-actions/auth": 2,
    "google-github-actions/setup-gcloud": 2,
    "pulumi/actions": 6,
}
SAME_REPO = "github.event.pull_request.head.repo.full_name == github.repository"


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def triggers(workflow: dict[str, Any]) -> dict[str, Any]:
    # YAML 1.1 reads the bare key `on` as the boolean True.
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return {t: None for t in on}
    return dict(on or {})


def workflow(name: str) -> dict[str, Any]:
    return load(GITHUB / "workflows" / name)


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return job.get("steps") or []


def all_steps() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in WORKFLOWS:
        for job_id, job in (load(path).get("jobs") or {}).items():
            for step in steps(job):
                yield f"{path.name}:{job_id}", step
    for path in ACTIONS:
        for step in load(path)["runs"].get("steps") or []:
            yield str(path.relative_to(GITHUB)), step


def uses(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in steps(job) if str(s.get("uses", "")).split("@")[0] == action]


# --- schema -------------------------------------------------------------------------------------


def check_jsonschema(*args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("check_jsonschema") is None:
        pytest.skip("check-jsonschema is not installed (it is pinned in requirements-dev.txt)")
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", *args], capture_output=True, text=True, timeout=60
    )


def test_there_are_workflows():
    names = {p.name for p in WORKFLOWS}
    assert {"pull-request.yml", "pr-comment.yml", "deploy.yml", "pulumi-up.yml"} <= names


@pytest.mark.parametrize(
    "schema, files",
    [
        ("vendor.github-workflows", WORKFLOWS),
        # Every job that runs on a runner says how long it may take (not the 6-hour default).
        ("custom.github-workflows-require-timeout", WORKFLOWS),
        ("vendor.github-actions", ACTIONS),
    ],
    ids=["workflows", "job-timeouts", "composite-actions"],
)
def test_schema(schema: str, files: list[Path]):
    assert files
    result = check_jsonschema("--builtin-schema", schema, *map(str, files))
    assert result.returncode == 0, result.stdout + result.stderr


# --- every workflow -----------------------------------------------------------------------------


def test_actions_are_pinned_to_known_major_versions():
    for where, step in all_steps():
        ref = step.get("uses")
        if ref is None or ref.startswith("./"):
            continue
        name, _, version = ref.partition("@")
        assert name in PINNED, f"{where}: {name} is not one of the reviewed actions"
        assert version == f"v{PINNED[name]}", f"{where}: {ref} (expected @v{PINNED[name]})"


def test_run_scripts_do_not_interpolate_expressions():
    # ${{ }} inside a script is pasted into the shell before it runs: a branch or stack name
    # from a fork could inject commands. Values reach scripts through env: instead.
    for where, step in all_steps():
        if "run" in step:
            assert "${{" not in step["run"], f"{where}: {step.get('name') or step['run'][:40]!r}"


def test_no_pull_request_target():
    # pull_request_target runs with write access and secrets; nothing here needs it.
    for path in WORKFLOWS:
        assert "pull_request_target" not in triggers(load(path)), path.name


def test_privileged_triggers_never_check_out_pr_code():
    for path in WORKFLOWS:
        wf = load(path)
        if not {"workflow_run", "pull_request_target"} & set(triggers(wf)):
            continue
        for job_id, job in wf["jobs"].items():
            assert not uses(job, "actions/checkout"), f"{path.name}:{job_id} checks out code"
            for step in steps(job):
                assert "run" not in step, f"{path.name}:{job_id}: runs a script in a privileged workflow"


def test_no_service_account_keys():
    for path in WORKFLOWS:
        assert "credentials_json" not in path.read_text(), f"{path.name}: use Workload Identity Federation"


def test_default_token_is_read_only():
    for path in WORKFLOWS:
        perms = load(path).get("permissions")
        assert perms in ({}, {"contents": "read"}), f"{path.name}: top-level permissions {perms}"


def test_checkouts_do_not_keep_the_token():
    for where, step in all_steps():
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert (step.get("with") or {}).get("persist-credentials") is False, where


def test_setup_python_is_311_with_pip_cache():
    found = 0
    for where, step in all_steps():
        if str(step.get("uses", "")).startswith("actions/setup-python@"):
            found += 1
            w = step["with"]
            assert str(w["python-version"]) == "3.11", where
            assert w["cache"] == "pip", where
            assert w["cache-dependency-path"].split() == ["requirements*.txt", "policy/requirements.txt"], where
    assert found


def test_gcp_auth_is_workload_identity_from_variables():
    found = 0
    for where, step in all_steps():
        if str(step.get("uses", "")).startswith("google-github-actions/auth@"):
            found += 1
            w = step["with"]
            assert w["workload_identity_provider"] == "${{ vars.GCP_WORKLOAD_IDENTITY_PROVIDER }}", where
            assert w["service_account"] == "${{ vars.GCP_SERVICE_ACCOUNT }}", where
    assert found


def test_jobs_that_authenticate_can_mint_oidc_tokens_and_have_the_gke_plugin():
    for path in WORKFLOWS:
        for job_id, job in (load(path).get("jobs") or {}).items():
            if uses(job, "google-github-actions/auth"):
                assert (job.get("permissions") or {}).get("id-token") == "write", f"{path.name}:{job_id}"
                gcloud = uses(job, "google-github-actions/setup-gcloud")
                assert gcloud and "gke-gcloud-auth-plugin" in gcloud[0]["with"]["install_components"]


def test_pulumi_steps_use_the_policy_pack_and_the_backend_variable():
    commands = set()
    for path in WORKFLOWS:
        for job_id, job in (load(path).get("jobs") or {}).items():
            for step in uses(job, "pulumi/actions"):
                w = step["with"]
                commands.add(w["command"])
                assert w["policyPacks"] == "policy", f"{path.name}:{job_id}"
                assert w["policyPackConfigs"] == "${{ steps.policy.outputs.config }}"
                assert w["cloud-url"] == "${{ vars.PULUMI_BACKEND_URL }}"
                assert step["env"]["PULUMI_ACCESS_TOKEN"] == "${{ secrets.PULUMI_ACCESS_TOKEN }}"
                policy = next(s for s in steps(job) if s.get("id") == "policy")
                assert 'policy/config/$STACK.json' in policy["run"]
                # The pack runs from its own policy/.venv, which the job must have built.
                env = uses(job, "./.github/actions/python-env")
                assert env and env[0]["with"]["policy-pack"] == "true", f"{path.name}:{job_id}"
    assert commands == {"preview", "up"}


# --- pull requests ------------------------------------------------------------------------------


def test_pull_request_stack_matrix_is_derived_from_stacks_folder():
    wf = workflow("pull-request.yml")
    assert "pull_request" in triggers(wf)
    lister = wf["jobs"]["stacks"]
    assert any(".github/scripts/stacks.py list" in s.get("run", "") for s in steps(lister))
    for job_id in ("synth", "preview"):
        matrix = wf["jobs"][job_id]["strategy"]["matrix"]
        assert matrix["stack"] == "${{ fromJSON(needs.stacks.outputs.stacks) }}", job_id


def test_existing_stacks_match_the_test_suite():
    assert stacks_script.existing_stacks() == STACKS


def test_pull_request_jobs_run_tests_and_synth_and_upload_the_build():
    jobs = workflow("pull-request.yml")["jobs"]
    assert any(s.get("run") == ".ci/run" for s in steps(jobs["test"]))
    synth = jobs["synth"]
    assert any("-m synth" in s.get("run", "") for s in steps(synth))
    upload = uses(synth, "actions/upload-artifact")[0]["with"]
    assert upload["name"] == "synth-${{ matrix.stack }}"
    assert upload["path"].rstrip("/") == "build/${{ matrix.stack }}"
    assert any("GITHUB_STEP_SUMMARY" in s.get("run", "") for s in steps(synth))


def test_only_same_repo_pull_requests_get_credentials():
    for job_id, job in workflow("pull-request.yml")["jobs"].items():
        text = yaml.safe_dump(job)
        privileged = "secrets." in text or (job.get("permissions") or {}).get("id-token") == "write"
        if privileged:
            assert SAME_REPO in job.get("if", ""), f"{job_id} uses credentials without the same-repo guard"
        else:
            assert "write" not in (job.get("permissions") or {}).values(), job_id


def test_preview_comments_on_the_pull_request():
    preview = workflow("pull-request.yml")["jobs"]["preview"]
    assert "vars.GCP_WORKLOAD_IDENTITY_PROVIDER != ''" in preview["if"]
    assert preview["permissions"]["pull-requests"] == "write"
    w = uses(preview, "pulumi/actions")[0]["with"]
    assert w["command"] == "preview"
    assert w["comment-on-pr"] is True and w["edit-pr-comment"] is True


def test_comment_workflow_follows_the_pull_request_workflow():
    comment = workflow("pr-comment.yml")
    names = {load(p).get("name") for p in WORKFLOWS}
    watched = triggers(comment)["workflow_run"]["workflows"]
    assert watched == [workflow("pull-request.yml")["name"]] and set(watched) <= names
    job = comment["jobs"]["comment"]
    assert job["permissions"] == {"actions": "read", "pull-requests": "write"}
    download = uses(job, "actions/download-artifact")[0]["with"]
    assert download["pattern"] == "synth-*"
    assert download["run-id"] == "${{ github.event.workflow_run.id }}"
    script = uses(job, "actions/github-script")[0]["with"]["script"]
    # The PR is identified from the event payload and the API, one marker per stack.
    assert "run.head_sha" in script and "gke-ai-batch:synth:${stack}" in script
    assert "updateComment" in script


# --- deploys ------------------------------------------------------------------------------------


def test_deploy_runs_on_push_to_main_after_tests():
    wf = workflow("deploy.yml")
    assert triggers(wf)["push"]["branches"] == ["main"]
    gate = wf["jobs"]["gate"]
    assert gate["if"] == "github.ref == 'refs/heads/main'"
    assert any(s.get("run") == ".ci/run" for s in steps(gate))
    assert any("stacks.py deploy-plan" in s.get("run", "") for s in steps(gate))


def test_production_waits_for_preproduction():
    jobs = workflow("deploy.yml")["jobs"]
    pre, prod = jobs["preproduction"], jobs["production"]
    assert pre["needs"] == "gate"
    assert set(prod["needs"]) == {"gate", "preproduction"}
    assert "needs.preproduction.result == 'success'" in prod["if"]
    for job, wave, reviewers in ((pre, "preproduction", False), (prod, "production", True)):
        assert job["uses"] == "./.github/workflows/pulumi-up.yml"
        assert job["strategy"]["matrix"]["stack"] == f"${{{{ fromJSON(needs.gate.outputs.{wave}) }}}}"
        assert job["with"] == {"stack": "${{ matrix.stack }}", "require-reviewers": reviewers}
        assert job["permissions"]["id-token"] == "write"


def test_pulumi_up_job_uses_the_stack_environment_and_a_concurrency_group():
    wf = workflow("pulumi-up.yml")
    assert "workflow_call" in triggers(wf)
    (up,) = wf["jobs"].values()
    assert up["environment"] == "${{ inputs.stack }}"
    assert "${{ inputs.stack }}" in up["concurrency"]["group"]
    assert up["concurrency"]["cancel-in-progress"] is False
    names = [s.get("name") or s.get("uses") for s in steps(up)]
    # Reviewer check and staleness check before anything touches the cloud; synth before auth.
    assert names.index("Require reviewers on the environment") < names.index("google-github-actions/auth@v2")
    assert names.index("python -m synth") < names.index("google-github-actions/auth@v2")
    assert uses(up, "pulumi/actions")[0]["with"]["command"] == "up"


def test_deploy_list():
    waves = stacks_script.read_deploy_list()
    assert waves["preproduction"] == ["dev"]
    assert "prod" in waves["production"]
    plan, _ = stacks_script.deploy_plan()
    for wave, listed in plan.items():
        assert set(listed) <= set(STACKS), wave


def test_deploy_list_rejects_mistakes(tmp_path: Path):
    bad = {
        "staging: [dev]\n": "unknown waves",
        "preproduction: [dev]\nproduction: [dev]\n": "more than once",
        "production: ['prod; rm -rf /']\n": "not a valid stack name",
    }
    for text, message in bad.items():
        path = tmp_path / "deploy-stacks.yml"
        path.write_text(text)
        with pytest.raises(ValueError, match=message):
            stacks_script.read_deploy_list(path)


def test_deploy_plan_skips_missing_stacks_with_a_warning(tmp_path: Path):
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text("config: {}\n")
    path = tmp_path / "deploy-stacks.yml"
    path.write_text("preproduction: [dev]\nproduction: [prod]\n")
    plan, warnings = stacks_script.deploy_plan(tmp_path, path)
    assert plan == {"preproduction": ["dev"], "production": []}
    assert len(warnings) == 1 and "Pulumi.prod.yaml" in warnings[0]


# --- the comment text ---------------------------------------------------------------------------


@pytest.mark.parametrize("code, status", [(0, "✅"), (2, "invalid stack config"), (3, "mandatory policy")])
def test_comment_body_status(code: int, status: str):
    body = stacks_script.comment_body("dev", code, "# dev\n", "boom ``` <b>")
    assert status in body.splitlines()[0] and "# dev" in body
    if code:
        assert "boom ``` &lt;b&gt;" in body
    else:
        assert "boom" not in body


def test_comment_body_is_truncated():
    body = stacks_script.comment_body("dev", 0, "x" * 100_000, "")
    assert len(body) < 65_536 and "truncated" in body


def test_stack_names_are_checked():
    assert stacks_script.STACK_NAME.match("tpu-multislice")
    for name in ("", "-x", "a b", "a;b", "$(id)", "x" * 101):
        assert not stacks_script.STACK_NAME.match(name), name
    # pr-comment.yml applies the same rule to artifact names.
    script = uses(workflow("pr-comment.yml")["jobs"]["comment"], "actions/github-script")[0]["with"]["script"]
    assert f"/{stacks_script.STACK_NAME.pattern}/" in script
