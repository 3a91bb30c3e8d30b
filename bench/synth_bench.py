"""Benchmark: synth's wall time and peak memory as a platform grows, against a floor.

    .venv/bin/python bench/synth_bench.py                   # sizes 1,16,64,256 slices, 3 repeats
    .venv/bin/python bench/synth_bench.py --sizes 16,256 --repeat 5
    .venv/bin/python bench/synth_bench.py --json            # machine-readable results on stdout
    .venv/bin/python bench/synth_bench.py --profile 256     # cProfile synth and both floors at 256 slices
    .venv/bin/python bench/synth_bench.py --root DIR        # benchmark another checkout (e.g. before/after)
    .venv/bin/python bench/synth_bench.py --only process --sizes 256 --repeat 7   # the whole-process figure alone
    .venv/bin/python bench/synth_bench.py --only process --sizes 256 --teams 2 --without-tpu7x   # few teams

A benchmark, not a test: it asserts nothing and never fails on a slow result; it prints
whether the target is met. It takes about three minutes with the defaults on 2 cores.

The whole-process target (issue 21, floor redefined by issue 29; at the largest size; `--only
process` runs it alone): synth of the stack as a whole process, `python -m synth --config FILE
--out DIR`, costs at most 1.5x the floor in wall and in CPU time. The floor is a generated
program (floor-sdk-S.py) that imports only the SDK classes of the types it registers, as a
hand-written program would (`from pulumi_gcp.container import NodePool`, `from
pulumi_kubernetes.helm.v3 import Release`, pulumi_kubernetes.apiextensions' CustomResource for
Kueue's and JobSet's kinds; the type -> class table is the one each provider registers with the
SDK in its __init__.py), sets `pulumi.runtime.set_mocks` with trivial Mocks (new_resource
returns the inputs) and registers the resources synth recorded with their type tokens, names
and inputs, flat (no parents, dependencies or providers), waiting for them as
`pulumi.runtime.test` does. Two more processes split the figures: imports (the floor with
nothing to register: what any program pays for those imports) and floor-all (issue 21's floor,
importing every SDK module synth's process ran, noted by one uncounted synth run: floor-all
minus floor is what synth's choice of SDK imports costs beyond its types' needs). All are
measured from outside: wall time from spawn to exit, and the child's CPU time and peak RSS from
os.wait4. Runs alternate their order each repeat; the table gives medians, min-max and each
repeat's ratio. The processes run with Python's bytecode cache on (into the work dir), as
Python runs by default.

The rest of this docstring is about the in-process figures against the recording engine.

What it generates (in a temp dir, or --keep DIR): for each size S in --sizes, a stack file
`Pulumi.bench-S.yaml` with S TPU slices spread over 1, 4 or 8 pool entries of different shapes
and capacities (v6e 4x4 on-demand and spot, v5e 2x4 spot, v5p 2x2x2 reservation, tpu7x 2x2x2
with its workload policy, v5e 4x4 queued, v6e 2x4 flex-start, a second v6e 4x4 on-demand),
so that there are up to seven derived flavors and a ProvisioningRequest admission check;
teams growing with the size (1, 4, 16, 64 for 1, 16, 64, 256 slices: S/4, at least 1, at most
64), cluster queues = teams/2 (at least 1) in cohorts of 4, two priorities and three workloads
(a JobSet, a Job and a ProvisioningRequest, or a second Job when there is no queued pool).

How it measures: every run is a fresh `python bench/synth_bench.py _worker ...` subprocess,
so imports, caches and memory are isolated. The worker first imports everything the program
uses (synth, components, pulumi_gcp and pulumi_kubernetes including the lazily loaded
submodules) and reports that as `import` time; it is not part of the figures below.
  - synth: `synth.synthesize(ROOT, StackFile)` timed with time.perf_counter (the call the CLI
    makes: program run, plan, policy, report; writing resources.json/manifests.yaml is timed
    apart as `write`). Phases are timed by wrapping, in the worker only, engine.run,
    engine.run_program (the program body), gke_ai_batch.config.load, gke_ai_batch.plan.build_plan,
    gke_ai_batch.components.platform.deploy, gke_ai_batch.synth.policy.findings, gke_ai_batch.synth.report.render and
    RecordingMonitor.RegisterResource; time in the cyclic garbage collector through
    gc.callbacks.
  - floor: the same recording engine (`gke_ai_batch.synth.engine.run`) running a generated program that
    registers the resources synth recorded for that size, with the same shape: a trivial
    ComponentResource subclass per component, a trivial CustomResource subclass with two small
    inputs per custom resource, a ProviderResource subclass per provider, with the recorded
    parents, dependencies (as depends_on) and provider references, in the recorded order.
    It is Pulumi's own per-resource cost under this engine.
  - replay: the floor program again, but each resource carries its recorded type token and
    its recorded inputs (nested dicts, as the engine received them). replay - floor is the SDK
    cost of serializing inputs of that size; synth - replay is what remains: the project's
    code (config, plan, components, policy, report) and the SDK's typed-class machinery
    (pulumi_gcp / pulumi_kubernetes input and output types, Output-valued inputs).
  - memory: peak RSS of the worker process (resource.getrusage ru_maxrss) after the timed
    call, and its growth over the RSS measured after imports (VmRSS). Every worker imports the
    same modules, so the peaks are comparable. tracemalloc is not used (it slows the run).
Runs are interleaved (each repeat runs every size: synth, floor, replay) after one uncounted
warm-up synth per size (which also records the shape the floors rebuild); the table shows
medians and the spread (max-min)/median. Other processes on the machine show up as spread:
compare the CPU-time ratio (user+sys of the timed call), which contention inflates less.

Target (issue 5 item 4): at the largest size synth costs at most 1.5x the floor, and time
grows close to linearly in the resources registered. "Close to linearly" is judged here by two
numbers, each at most 1.3: the time per resource at the largest size over that at 16 slices,
and the marginal cost per added resource of the last step (64 -> 256 slices) over that of the
first step from 16 slices on (16 -> 64). The least-squares slope and intercept of time vs
resources are printed beside them. The verdicts use median wall time; the CPU-time figures
beside them are steadier when other processes share the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
RATIO_TARGET = 1.5
LINEARITY_TARGET = 1.3
DEFAULT_SIZES = (1, 16, 64, 256)

# Pool entry templates, used in this order; entries 8+ repeat shapes (and so share flavors).
POOL_TEMPLATES: list[dict[str, Any]] = [
    {"tag": "v6e-4x4", "tpu": {"version": "v6e", "topology": "4x4"}, "capacity": "onDemand"},
    {"tag": "v6e-4x4s", "tpu": {"version": "v6e", "topology": "4x4"}, "capacity": "spot"},
    {"tag": "v5e-2x4s", "tpu": {"version": "v5e", "topology": "2x4"}, "capacity": "spot"},
    {
        "tag": "v5p-222r",
        "tpu": {"version": "v5p", "topology": "2x2x2"},
        "capacity": "reservation",
        "reservation": "bench-v5p",
    },
    {"tag": "t7x-222", "tpu": {"version": "tpu7x", "topology": "2x2x2"}, "capacity": "onDemand"},
    {"tag": "v5e-4x4q", "tpu": {"version": "v5e", "topology": "4x4"}, "capacity": "queued", "maxRunDuration": "24h"},
    {"tag": "v6e-2x4f", "tpu": {"version": "v6e", "topology": "2x4"}, "capacity": "flexStart", "maxRunDuration": "12h"},
    {"tag": "v6e-4x4b", "tpu": {"version": "v6e", "topology": "4x4"}, "capacity": "onDemand"},
]


# -- stack generation ------------------------------------------------------------------------


# --teams N and --without-tpu7x (set in main): a platform of many slices and few teams, without
# the one type (tpu7x's ResourcePolicy) that makes any program import pulumi_gcp.compute. The
# defaults make 639 resources at 256 slices; issue 29's stack had 297, so the floor's
# registrations weigh less against synth's fixed costs (imports of config, model, policy, report).
TEAMS: int | None = None
WITHOUT_TPU7X = False


def _templates() -> list[dict[str, Any]]:
    return [t for t in POOL_TEMPLATES if not (WITHOUT_TPU7X and t["tpu"]["version"] == "tpu7x")]


def scale(slices: int) -> dict[str, int]:
    """Entries, teams and queues for a number of slices: 1 -> (1, 1, 1), 16 -> (4, 4, 2),
    64 -> (8, 16, 8), 256 -> (8, 64, 32); --teams fixes the teams (and queues, half of them)."""
    entries = 1 if slices < 4 else 4 if slices < 64 else 8
    entries = min(entries, slices)
    teams = max(1, min(64, slices // 4)) if TEAMS is None else TEAMS
    queues = max(1, teams // 2)
    return {"entries": entries, "teams": teams, "queues": queues}


def _vms(pool: dict[str, Any]) -> int:
    if "tpu" not in pool:
        return 1
    sys.path.insert(0, str(ROOT))
    from gke_ai_batch.domain.catalogue import tpu_slice

    return tpu_slice(pool["tpu"]["version"], pool["tpu"]["topology"], pool["tpu"].get("machineType")).vms


GPU_TYPES = (
    "nvidia-tesla-t4", "nvidia-l4", "nvidia-tesla-a100", "nvidia-a100-80gb", "nvidia-h100-80gb",
    "nvidia-h100-mega-80gb", "nvidia-h200-141gb", "nvidia-b200",
)


def stack_config(slices: int) -> dict[str, Any]:
    """The `config:` mapping of a stack file with `slices` TPU slices."""
    s = scale(slices)
    pools = []
    per, extra = divmod(slices, s["entries"])
    for i in range(s["entries"]):
        templates = _templates()
        t = templates[i % len(templates)]
        entry = {k: v for k, v in t.items() if k != "tag"}
        pools.append({"name": f"p{i}-{t['tag']}", **entry, "slices": per + (1 if i < extra else 0)})
    queues = []
    for q in range(s["queues"]):
        cq: dict[str, Any] = {"name": f"cq-{q}"}
        if s["queues"] > 1:
            cq["cohort"] = f"cohort-{q // 4}"
            cq["preemption"] = {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
        queues.append(cq)
    teams = [
        {"namespace": f"team-{t}", "localQueue": "lq", "clusterQueue": f"cq-{t % s['queues']}"}
        for t in range(s["teams"])
    ]
    # The sample workloads' teams: multi-host TPU pods use the host network.
    for team in (teams[0], teams[-1]):
        team["podSecurity"] = "privileged"
    first = pools[0]
    queued = next((p for p in pools if p["capacity"] == "queued"), None)
    image = "us-docker.pkg.dev/cloud-tpu-images/jax-ai-image/tpu:jax0.8.1-rev1"
    workloads: list[dict[str, Any]] = [
        {
            "kind": "jobset",
            "name": "wl-jobset",
            "team": "team-0",
            "pool": first["name"],
            "slices": min(2, first["slices"]),
            "image": image,
            "command": ["python3", "-c", "import jax; print(jax.device_count())"],
            "priority": "bench-high",
        },
        {
            "kind": "job",
            "name": "wl-job",
            "team": teams[-1]["namespace"],
            "pool": first["name"],
            "image": image,
            "priority": "bench-low",
        },
    ]
    if queued is not None:
        workloads.append(
            {
                "kind": "provisioningRequest",
                "name": "wl-provreq",
                "team": "team-0",
                "pool": queued["name"],
                "image": image,
                # one pod per host of the slice, as a multi-host TPU slice runs
                "count": _vms(queued),
            }
        )
    else:
        workloads.append({"kind": "job", "name": "wl-job-2", "team": "team-0", "pool": first["name"], "image": image})
    return {
        "gcp:project": "bench-project",
        "gcp:region": "us-central1",
        "gke-ai-batch:cluster": {"name": "bench", "nodeLocations": ["us-central1-a"]},
        # A synthetic platform: every shape in one zone, which no real zone offers.
        "gke-ai-batch:catalogue": {"zones": {"us-central1-a": {
            "tpu": ["v4", "v5e", "v5p", "v6e", "tpu7x"], "gpu": sorted(GPU_TYPES)}}},
        "gke-ai-batch:nodePools": pools,
        "gke-ai-batch:clusterQueues": queues,
        "gke-ai-batch:teams": teams,
        "gke-ai-batch:priorities": [
            {"name": "bench-high", "value": 1000, "description": "Interactive."},
            {"name": "bench-low", "value": -100, "description": "Background; preempted first."},
        ],
        "gke-ai-batch:workloads": workloads,
    }


def write_stack(directory: Path, slices: int) -> Path:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from gke_ai_batch.synth import yamlread

    path = directory / f"Pulumi.bench-{slices}.yaml"
    path.write_text(yamlread.dump({"config": stack_config(slices)}))
    return path


# -- worker (runs in a fresh subprocess) -------------------------------------------------------


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _import_everything() -> None:
    """Everything the program imports, lazily loaded submodules included, so that the timed
    call measures work rather than first imports."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import pulumi  # noqa: F401
    import pulumi_gcp as gcp
    import pulumi_kubernetes as k8s

    import gke_ai_batch.config  # noqa: F401
    import gke_ai_batch.plan  # noqa: F401
    import gke_ai_batch.components.platform  # noqa: F401
    from gke_ai_batch import synth  # noqa: F401
    import gke_ai_batch.synth.engine  # noqa: F401
    import gke_ai_batch.synth.policy  # noqa: F401
    import gke_ai_batch.synth.report  # noqa: F401
    import gke_ai_batch.synth.summary  # noqa: F401
    from gke_ai_batch.components import k8s as k8s_objects

    for cls in (
        gcp.container.Cluster,
        gcp.container.NodePool,
        gcp.compute.ResourcePolicy,
        gcp.serviceaccount.Account,
        gcp.projects.IAMMember,
        k8s.Provider,
        k8s.helm.v3.Release,
        k8s.apiextensions.CustomResource,
    ):
        assert cls is not None
    for typed in k8s_objects._TYPED.values():
        typed()


class _Timers:
    def __init__(self):
        self.totals: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.in_run = False

    def add(self, key: str, dt: float) -> None:
        self.totals[key] = self.totals.get(key, 0.0) + dt
        self.calls[key] = self.calls.get(key, 0) + 1

    def wrap(self, owner, attr: str, key: str, *, split_by_run: bool = False) -> None:
        fn = getattr(owner, attr, None)
        if fn is None:  # the project moved it: leave that phase out rather than fail
            return
        timers = self

        def timed(*args, **kwargs):
            name = key if not split_by_run else f"{key}{'' if timers.in_run else '.post'}"
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                timers.add(name, time.perf_counter() - t0)

        setattr(owner, attr, timed)


class _GcTimer:
    """Time spent in the cyclic garbage collector, per generation (gc.callbacks)."""

    def __init__(self):
        self.seconds = [0.0, 0.0, 0.0]
        self.collections = [0, 0, 0]
        self._t0 = 0.0
        self.active = False

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if not self.active:
            return
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            gen = info["generation"]
            self.seconds[gen] += time.perf_counter() - self._t0
            self.collections[gen] += 1


def _instrument(timers: _Timers) -> None:
    """Phase timers, installed in the worker only (no project code is changed)."""
    import gke_ai_batch.config
    import gke_ai_batch.plan
    import gke_ai_batch.components.platform
    import gke_ai_batch.synth.engine
    import gke_ai_batch.synth.policy
    import gke_ai_batch.synth.report
    from gke_ai_batch import synth

    real_run = synth.engine.run

    def run(*args, **kwargs):
        timers.in_run = True
        t0 = time.perf_counter()
        try:
            return real_run(*args, **kwargs)
        finally:
            timers.add("engine.run", time.perf_counter() - t0)
            timers.in_run = False

    synth.engine.run = run
    # engine.run calls run_program: the program body, constructors included; what
    # remains of engine.run is the SDK resolving outputs and sending registrations.
    timers.wrap(synth.engine, "run_program", "program")
    timers.wrap(gke_ai_batch.config, "load", "config.load", split_by_run=True)
    timers.wrap(gke_ai_batch.plan, "build_plan", "build_plan", split_by_run=True)
    timers.wrap(gke_ai_batch.components.platform, "deploy", "deploy")
    timers.wrap(synth.policy, "findings", "policy")
    timers.wrap(synth.report, "render", "report")
    timers.wrap(synth.engine.RecordingMonitor, "RegisterResource", "monitor")
    timers.wrap(synth.engine.RecordingMonitor, "RegisterResourceOutputs", "monitor.outputs")


_CUSTOM: dict[str, bool] = {}  # urn -> request.custom, as the synth worker's engine saw it


def _note_custom() -> None:
    """Record which registrations are custom resources (the recording does not say)."""
    import gke_ai_batch.synth.engine
    from gke_ai_batch import synth

    cls = synth.engine.RecordingMonitor
    real = cls.RegisterResource

    def register(self, request):
        response = real(self, request)
        _CUSTOM[response.urn] = bool(request.custom)
        return response

    cls.RegisterResource = register


def _shape(recording) -> list[dict[str, Any]]:
    """The recorded resources as the floor programs rebuild them: kind, type, inputs, and
    parent, dependencies and provider as indices into this list (the stack is left out)."""
    index: dict[str, int] = {}
    out: list[dict[str, Any]] = []
    for r in recording.resources:
        if r.type == "pulumi:pulumi:Stack":
            continue
        if r.type.startswith("pulumi:providers:"):
            kind = "provider"
        elif _CUSTOM.get(r.urn, True):
            kind = "custom"
        else:
            kind = "component"
        provider = r.options.get("provider")
        out.append(
            {
                "kind": kind,
                "type": r.type,
                "name": r.name,
                "inputs": r.inputs,
                "parent": index.get(r.parent) if r.parent else None,
                "deps": [index[d] for d in r.dependencies if d in index],
                "provider": index.get(provider) if provider else None,
            }
        )
        index[r.urn] = len(out) - 1
    return out


FLOOR_PROGRAM = '''"""Floor ({variant}): the resources synth recorded, rebuilt without the project's code
(generated by bench/synth_bench.py). bare: trivial resource classes with two small inputs;
replay: the recorded type tokens and inputs through the same trivial classes."""
import json
import pulumi

REPLAY = {replay!r}


# Subclasses, as every real program has: the SDK records a stack trace (source positions)
# only for resources constructed through a subclass's __init__.
class Thing(pulumi.CustomResource):
    def __init__(self, type_, name, props, opts):
        super().__init__(type_, name, props, opts)


class Group(pulumi.ComponentResource):
    def __init__(self, type_, name, opts):
        super().__init__(type_, name, None, opts)


class Provider(pulumi.ProviderResource):
    def __init__(self, package, name, props, opts):
        super().__init__(package, name, props, opts)


shape = json.loads(open({shape_path!r}).read())
made = []
for i, r in enumerate(shape):
    parent = made[r["parent"]] if r["parent"] is not None else None
    deps = [made[d] for d in r["deps"]]
    if r["kind"] == "provider":
        package = r["type"].split(":")[2] if REPLAY else "bench"
        inputs = dict(r["inputs"]) if REPLAY else {{}}
        obj = Provider(package, f"r{{i}}", inputs, pulumi.ResourceOptions(parent=parent, depends_on=deps))
    elif r["kind"] == "component":
        type_ = r["type"] if REPLAY else "bench:index:Component"
        obj = Group(type_, f"r{{i}}", pulumi.ResourceOptions(parent=parent))
    else:
        provider = made[r["provider"]] if r["provider"] is not None else None
        type_ = r["type"] if REPLAY else "bench:index:Thing"
        inputs = dict(r["inputs"]) if REPLAY else {{"name": r["name"], "index": i}}
        obj = Thing(type_, f"r{{i}}", inputs, pulumi.ResourceOptions(parent=parent, depends_on=deps, provider=provider))
    made.append(obj)
for r, obj in zip(shape, made):
    if r["kind"] == "component":
        obj.register_outputs({{}})
'''


def worker(
    mode: str, stack_path: Path, shape_path: Path, out_path: Path, profile: bool = False
) -> None:
    import gc

    os.chdir(ROOT)
    t0 = time.perf_counter()
    _import_everything()
    import_s = time.perf_counter() - t0
    tracked = len(gc.get_objects())
    rss_base = _rss_kib()
    gc_timer = _GcTimer()
    gc.callbacks.append(gc_timer)

    from gke_ai_batch import synth
    from gke_ai_batch.synth import engine

    timers = _Timers()
    result: dict[str, Any] = {"mode": mode, "import_s": import_s, "rss_base_kib": rss_base}
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
    else:
        _instrument(timers)

    def timed(call):
        """The measured call: wall and CPU time, the collector's share, peak RSS."""
        c0, t0 = _cpu(), time.perf_counter()
        gc_timer.active = True
        if profiler:
            profiler.enable()
        value = call()
        if profiler:
            profiler.disable()
        gc_timer.active = False
        result["time_s"] = time.perf_counter() - t0
        result["cpu_s"] = _cpu() - c0
        result["rss_peak_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return value

    _note_custom()  # every mode, so that its (small) cost is the same on both sides
    if mode == "synth":
        stack_file = synth.StackFile.locate(ROOT, None, stack_path)
        res = timed(lambda: synth.synthesize(ROOT, stack_file))
        if res.error is not None:
            raise SystemExit(f"synth failed for {stack_path}:\n{res.error}")
        with tempfile.TemporaryDirectory() as out:
            t1 = time.perf_counter()
            synth.write_outputs(res, Path(out))
            result["write_s"] = time.perf_counter() - t1
        recording = res.recording
        plan = res.plan
        result["size"] = {
            "slices": plan.slices,
            "pools": len(plan.pools),
            "flavors": len(plan.flavors),
            "teams": len(plan.teams),
            "queues": len(plan.queues),
            "workloads": len(plan.workloads),
        }
        if shape_path is not None and not profile:
            shape_path.write_text(json.dumps(_shape(recording)))
    else:
        program = shape_path.with_suffix(f".{mode}.py")
        program.write_text(FLOOR_PROGRAM.format(variant=mode, replay=mode == "replay", shape_path=str(shape_path)))
        recording = timed(
            lambda: engine.run(program, project="bench", stack="floor", config={}, outputs_for=lambda *a: {})
        )
    result["resources"] = len(recording.resources)
    result["gc_s"] = sum(gc_timer.seconds)
    result["gc_seconds_by_generation"] = gc_timer.seconds
    result["gc_collections_by_generation"] = gc_timer.collections
    result["gc_tracked_after_import"] = tracked
    result["phases"] = timers.totals
    result["phase_calls"] = timers.calls
    if profiler is not None:
        import io
        import pstats

        for sort in ("cumulative", "tottime"):
            buf = io.StringIO()
            pstats.Stats(profiler, stream=buf).strip_dirs().sort_stats(sort).print_stats(45)
            print(f"==== {mode} {stack_path.name}: top functions by {sort} ====")
            print(buf.getvalue())
        profiler.dump_stats(str(out_path.with_suffix(".prof")))
        print(f"pstats dump: {out_path.with_suffix('.prof')}")
    out_path.write_text(json.dumps(result))


# -- issue 21/29's floor: whole processes, the SDK's stock mock engine ---------------------------

SDK_PACKAGES = ("pulumi", "pulumi_gcp", "pulumi_kubernetes")

SDK_FLOOR_PROGRAM = '''"""Floor (issue 29): the resources synth recorded for {stack!r}, registered flat (no parents,
dependencies or providers) with their type tokens, names and inputs under the SDK's stock mock
engine, after importing {what} (generated by bench/synth_bench.py). Prints the number of
resources the mock monitor registered."""
import importlib
import json

import pulumi
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

for module, name in {imports!r}:
    # `from module import name`; a provider's package runs a lazily loaded submodule when first
    # looked up (with no name, looking up its __all__ does).
    getattr(importlib.import_module(module), name or "__all__", None)


class Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return f"{{args.name}}-id", args.inputs

    def call(self, args):
        return {{}}, None


def program():
    with open({shape_path!r}) as f:
        shape = json.load(f)
    for r in shape:
        if r["kind"] == "provider":
            pulumi.ProviderResource(r["type"].split(":")[2], r["name"], r["inputs"])
        elif r["kind"] == "component":
            pulumi.ComponentResource(r["type"], r["name"]).register_outputs({{}})
        else:
            pulumi.CustomResource(r["type"], r["name"], r["inputs"])


monitor = pulumi.runtime.mocks.MockMonitor(Mocks())
pulumi.runtime.set_mocks(Mocks(), project="bench", stack="floor", preview=False, monitor=monitor)
# As pulumi.runtime.test (pulumi/runtime/mocks.py) waits for a program under the mocks: run it,
# then pump the event loop until every registration has been sent and answered.
_sync_await(run_pulumi_func(program))
print(len(monitor.resources))
'''


def _registered_classes(package: str) -> dict[str, tuple[str, str]]:
    """Type token -> (module, class) as the provider package registers them with the SDK
    (`_utilities.register(resource_modules=..., resource_packages=...)` in its __init__.py, the
    table the SDK itself uses to rehydrate resources), read from the source without importing it."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return {}
    text = Path(spec.origin).read_text()
    out: dict[str, tuple[str, str]] = {}
    for key in ("resource_modules", "resource_packages"):
        found = re.search(key + r'="""(.*?)"""', text, re.S)
        for entry in json.loads(found.group(1)) if found else []:
            if "classes" in entry:
                out.update({token: (entry["fqn"], cls) for token, cls in entry["classes"].items()})
            else:
                out[entry["token"]] = (entry["fqn"], entry["class"])
    return out


# A Kubernetes type no SDK class declares (Kueue's, JobSet's, ProvisioningRequest) is written
# with the provider's generic CustomResource, as a hand-written program would.
_K8S_GENERIC = ("pulumi_kubernetes.apiextensions", "CustomResource")


def floor_imports(shape: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """What a hand-written program registering these resources imports: the SDK class of each
    type token (`from pulumi_gcp.container import NodePool`, `from pulumi_kubernetes.helm.v3
    import Release`...), sorted, once each. Components need only `pulumi`."""
    tables = {"gcp": _registered_classes("pulumi_gcp"), "kubernetes": _registered_classes("pulumi_kubernetes")}
    needed: set[tuple[str, str]] = set()
    for r in shape:
        if r["kind"] == "component":
            continue
        token = r["type"]
        package = token.split(":")[2] if r["kind"] == "provider" else token.split(":")[0]
        found = tables.get(package, {}).get(token)
        if found is None and package == "kubernetes":
            found = _K8S_GENERIC
        if found is None:
            raise SystemExit(f"no SDK class registers {token!r}: the floor cannot import it")
        needed.add(found)
    return sorted(needed)


def write_sdk_floor(
    directory: Path,
    slices: int,
    shape_path: Path,
    imports: list[tuple[str, str]],
    tag: str = "floor",
    what: str = "the SDK classes of the types it registers",
) -> Path:
    """A generated floor program for one size: `python <it>` is the whole process."""
    path = directory / f"{tag}-sdk-{slices}.py"
    path.write_text(
        SDK_FLOOR_PROGRAM.format(
            stack=f"bench-{slices}", imports=imports, shape_path=str(shape_path), what=what
        )
    )
    return path


# Run once, uncounted, in place of `python -m synth ...`: the same CLI, plus a note at exit of
# the SDK modules the process ran, which the second floor (synth's SDK imports) imports too. A
# provider's submodule that was never used stays a lazy placeholder in sys.modules
# (pulumi/_utils.py lazy_import, _LazyModule) and is left out.
_MODULES_WRAPPER = """import atexit, json, runpy, sys
def _note():
    ran = [n for n, m in list(sys.modules.items()) if n.split(".")[0] in {packages!r}
           and type(m).__name__ != "_LazyModule"]
    with open({out!r}, "w") as f:
        json.dump(sorted(ran), f)
atexit.register(_note)
sys.argv = ["synth", *{argv!r}]
runpy.run_module("synth", run_name="__main__", alter_sys=True)
"""


def _synth_argv(stack: Path, out: Path) -> list[str]:
    return ["--config", str(stack), "--out", str(out), "--quiet"]


def _process_env(workdir: Path) -> dict[str, str]:
    """Python as it runs by default, with its bytecode cache, which PYTHONDONTWRITEBYTECODE (set in
    some sandboxes and CI images) would turn off: synth's own ~100 modules would then be compiled
    in every run while the SDK's come precompiled from site-packages. The cache goes to the
    workdir (PYTHONPYCACHEPREFIX), for the SDK's modules too, so the checkout stays clean; the
    uncounted first runs fill it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
    return env


def _run_process(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """A whole process, measured from outside: wall time from spawn to exit, and the child's own
    user+sys CPU time and peak RSS (os.wait4's rusage is that one child's)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{stderr}{stdout}")
    return {
        "time_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_peak_kib": usage.ru_maxrss,
        "stdout": stdout,
    }


# floor: the floor (the SDK classes of the types registered, as a hand-written program
# imports them); imports: that floor with nothing to register (what any program pays for those
# imports, set_mocks and the wait); floor-all: the older floor, importing every SDK module synth's
# process ran. floor-all minus floor is what synth's choice of SDK imports costs beyond what its
# types need; synth over floor-all is synth's own work and imports against the stock engine's.
PROCESS_KINDS = ("synth", "floor", "imports", "floor-all")


def prepare_processes(slices: int, workdir: Path) -> dict[str, list[str]]:
    """The commands compared at one size: synth's CLI, the generated floor, the floor with nothing
    to register, and the floor with every SDK module synth's process ran."""
    stack = workdir / f"Pulumi.bench-{slices}.yaml"
    if not stack.is_file():
        write_stack(workdir, slices)
    shape = workdir / f"shape-{slices}.json"
    if not shape.is_file():
        _run_worker("synth", stack, shape, workdir / f"warm-{slices}.json")
    modules_file = workdir / f"sdk-modules-{slices}.json"
    out = workdir / f"out-{slices}"
    wrapper = _MODULES_WRAPPER.format(out=str(modules_file), packages=SDK_PACKAGES, argv=_synth_argv(stack, out))
    _run_process([PYTHON, "-c", wrapper], _process_env(workdir))
    needed = floor_imports(json.loads(shape.read_text()))
    (workdir / f"floor-imports-{slices}.json").write_text(json.dumps(needed, indent=1))
    floor = write_sdk_floor(workdir, slices, shape, needed)
    nothing = workdir / "shape-empty.json"
    nothing.write_text("[]")
    imports = write_sdk_floor(workdir, slices, nothing, needed, tag="imports")
    ran = [(m, "") for m in json.loads(modules_file.read_text())]
    floor_all = write_sdk_floor(
        workdir, slices, shape, ran, tag="floor-all", what="every SDK module synth's process ran"
    )
    return {
        "synth": [PYTHON, "-m", "synth", *_synth_argv(stack, out)],
        "floor": [PYTHON, str(floor)],
        "imports": [PYTHON, str(imports)],
        "floor-all": [PYTHON, str(floor_all)],
    }


def measure_processes(slices: int, repeat: int, workdir: Path, log) -> dict[str, Any]:
    cmds = prepare_processes(slices, workdir)
    expected = len(json.loads((workdir / f"shape-{slices}.json").read_text()))
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in PROCESS_KINDS}
    registered = {"floor": str(expected), "imports": "0", "floor-all": str(expected)}
    env = _process_env(workdir)
    log(f"whole processes at {slices} slices: one uncounted run each, then {repeat} rounds")
    for kind in PROCESS_KINDS:
        _run_process(cmds[kind], env)  # warms the file cache and Python's bytecode cache
    for rep in range(repeat):
        # Alternate the order, so that a slow spell of the machine favours no side.
        order = PROCESS_KINDS if rep % 2 == 0 else PROCESS_KINDS[::-1]
        for kind in order:
            run = _run_process(cmds[kind], env)
            if kind in registered and run["stdout"].split() != [registered[kind]]:
                raise SystemExit(f"{kind}: registered {run['stdout'].strip()!r} resources, not {registered[kind]}")
            run.pop("stdout")
            runs[kind].append(run)
            (workdir / f"process-{kind}-{slices}-{rep}.json").write_text(json.dumps(run))
        log(f"repeat {rep + 1}/{repeat}: " + ", ".join(f"{k} {runs[k][-1]['time_s']:.2f}s" for k in PROCESS_KINDS))
    return summarize_processes(slices, expected, runs)


def summarize_processes(slices: int, resources: int, runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {"slices": slices, "resources": resources, "repeat": len(runs["synth"])}
    for kind in (k for k in PROCESS_KINDS if runs.get(k)):
        times = [r["time_s"] for r in runs[kind]]
        cpus = [r["cpu_s"] for r in runs[kind]]
        out[kind] = {
            "s": _median(times),
            "min_s": min(times),
            "max_s": max(times),
            "spread": _spread(times),
            "cpu_s": _median(cpus),
            "cpu_spread": _spread(cpus),
            "rss_peak_mib": _median([r["rss_peak_kib"] for r in runs[kind]]) / 1024,
            "runs_s": times,
        }
    # Each repeat's synth run over the floor run beside it: their range is the honest error bar
    # of the ratio of medians.
    out["pair_ratios"] = [s["time_s"] / f["time_s"] for s, f in zip(runs["synth"], runs["floor"])]
    out["ratio"] = out["synth"]["s"] / out["floor"]["s"]
    out["cpu_ratio"] = out["synth"]["cpu_s"] / out["floor"]["cpu_s"]
    out["ratio_met"] = out["ratio"] <= RATIO_TARGET and out["cpu_ratio"] <= RATIO_TARGET
    if runs.get("floor-all"):
        out["ratio_all"] = out["synth"]["s"] / out["floor-all"]["s"]
        out["cpu_ratio_all"] = out["synth"]["cpu_s"] / out["floor-all"]["cpu_s"]
    return out


def load_process_runs(workdir: Path) -> dict[str, Any] | None:
    """Issue 21's figures from the raw results of an earlier --keep directory, at its largest size."""
    found: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for path in sorted(workdir.glob("process-*-*-*.json")):
        kind, size, _ = path.stem.removeprefix("process-").rsplit("-", 2)
        if kind in PROCESS_KINDS:
            found.setdefault(int(size), {k: [] for k in PROCESS_KINDS})[kind].append(json.loads(path.read_text()))
    # floor-all is optional: an --keep directory from before it existed still summarizes.
    complete = [s for s, by_kind in found.items() if all(by_kind[k] for k in PROCESS_KINDS[:3])]
    if not complete:
        return None
    size = max(complete)
    shape = workdir / f"shape-{size}.json"
    resources = len(json.loads(shape.read_text())) if shape.is_file() else 0
    return summarize_processes(size, resources, found[size])


def render_processes(p: dict[str, Any]) -> str:
    sy, fl, im = p["synth"], p["floor"], p["imports"]
    pairs = sorted(p["pair_ratios"])

    def line(label: str, x: dict[str, Any]) -> str:
        return (
            f"  {label:<52} {x['s']:>6.2f} s [{x['min_s']:.2f}-{x['max_s']:.2f}]  CPU {x['cpu_s']:>5.2f} s "
            f"[±{100 * x['cpu_spread']:.0f}%]  peak RSS {x['rss_peak_mib']:>4.0f} MiB"
        )

    lines = [
        f"issue 29: whole processes at {p['slices']} slices ({p['resources']} resources), "
        f"{p['repeat']} repeats: median wall [min-max], median CPU [spread]",
        line("synth: python -m synth --config FILE --out DIR", sy),
        line("floor: stock set_mocks, flat, the types' SDK classes", fl),
        line("imports: the floor with nothing to register", im),
    ]
    if "floor-all" in p:
        lines.append(line("floor-all: the floor with synth's SDK imports", p["floor-all"]))
    lines.append(
        f"  beyond the imports: synth {sy['s'] - im['s']:.2f} s, floor {fl['s'] - im['s']:.2f} s "
        f"(CPU {sy['cpu_s'] - im['cpu_s']:.2f} s, {fl['cpu_s'] - im['cpu_s']:.2f} s)"
    )
    if "floor-all" in p:
        lines.append(
            f"  against floor-all (synth's work and own imports, SDK imports held equal): "
            f"wall {p['ratio_all']:.2f}x, CPU {p['cpu_ratio_all']:.2f}x"
        )
    lines.append(
        f"target synth <= {RATIO_TARGET}x floor (whole processes, wall and CPU): "
        f"{'MET' if p['ratio_met'] else 'NOT MET'} "
        f"(wall {p['ratio']:.2f}x, CPU {p['cpu_ratio']:.2f}x; each repeat's synth/floor wall "
        f"{pairs[0]:.2f}-{pairs[-1]:.2f})"
    )
    return "\n".join(lines)


# -- driver ------------------------------------------------------------------------------------


def _run_worker(mode: str, stack: Path, shape: Path, out: Path, profile: bool = False) -> dict[str, Any]:
    cmd = [PYTHON, str(Path(__file__).resolve()), "_worker", mode, str(stack), str(shape), str(out), str(ROOT)]
    if profile:
        cmd.append("--profile")
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=not profile, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"worker {mode} {stack.name} failed ({proc.returncode}):\n{proc.stderr or ''}")
    return json.loads(out.read_text())


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _lsq(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares slope and intercept of ys over xs."""
    n = len(xs)
    if n < 2:
        return float("nan"), float("nan")
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else float("nan")
    return slope, my - slope * mx


MODES = ("synth", "floor", "replay")


def _spread(values: list[float]) -> float:
    med = _median(values)
    return (max(values) - min(values)) / med if med else 0.0


def _stats(runs: list[dict[str, Any]]) -> dict[str, Any]:
    times = [r["time_s"] for r in runs]
    med = _median(times)
    return {
        "s": med,
        "spread": (max(times) - min(times)) / med if med else 0.0,
        "cpu_s": _median([r["cpu_s"] for r in runs]),
        "cpu_spread": _spread([r["cpu_s"] for r in runs]),
        "gc_s": _median([r["gc_s"] for r in runs]),
        "full_gcs": _median([r["gc_collections_by_generation"][2] for r in runs]),
        "monitor_s": _median([r["phases"].get("monitor", 0.0) for r in runs]),
        "rss_peak_mib": _median([r["rss_peak_kib"] for r in runs]) / 1024,
        "rss_growth_mib": _median([r["rss_peak_kib"] - r["rss_base_kib"] for r in runs]) / 1024,
        "resources": runs[0]["resources"],
        "runs_s": times,
    }


def measure(sizes: list[int], repeat: int, workdir: Path, log) -> list[dict[str, Any]]:
    stacks = {s: write_stack(workdir, s) for s in sizes}
    shapes = {s: workdir / f"shape-{s}.json" for s in sizes}
    runs: dict[int, dict[str, list[dict[str, Any]]]] = {s: {m: [] for m in MODES} for s in sizes}
    log(f"warm-up: one uncounted synth per size ({', '.join(map(str, sizes))} slices)")
    for s in sizes:
        _run_worker("synth", stacks[s], shapes[s], workdir / f"warm-{s}.json")
    for rep in range(repeat):
        for s in sizes:
            for mode in MODES:
                runs[s][mode].append(_run_worker(mode, stacks[s], shapes[s], workdir / f"{mode}-{s}-{rep}.json"))
            log(
                f"repeat {rep + 1}/{repeat}, {s:>4} slices: "
                + ", ".join(f"{m} {runs[s][m][-1]['time_s']:.3f}s" for m in MODES)
            )
    return summarize(sizes, runs)


def load_runs(workdir: Path) -> tuple[list[int], dict[int, dict[str, list[dict[str, Any]]]]]:
    """The raw worker results a --keep directory holds (files <mode>-<slices>-<repeat>.json)."""
    runs: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for mode in MODES:
        for path in sorted(workdir.glob(f"{mode}-*-*.json")):
            _, size, _ = path.stem.split("-")
            runs.setdefault(int(size), {m: [] for m in MODES})[mode].append(json.loads(path.read_text()))
    sizes = sorted(s for s, by_mode in runs.items() if all(by_mode[m] for m in MODES))
    return sizes, runs


def summarize(sizes: list[int], runs: dict[int, dict[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    rows = []
    for s in sizes:
        syn = runs[s]["synth"]
        st = {m: _stats(runs[s][m]) for m in MODES}
        phase_keys = sorted({k for r in syn for k in r["phases"]})
        row = {
            "slices": s,
            "size": syn[0]["size"],
            "resources": st["synth"]["resources"],
            "synth_s": st["synth"]["s"],
            "floor_s": st["floor"]["s"],
            "replay_s": st["replay"]["s"],
            "ratio": st["synth"]["s"] / st["floor"]["s"],
            "cpu_ratio": st["synth"]["cpu_s"] / st["floor"]["cpu_s"],
            "replay_ratio": st["replay"]["s"] / st["floor"]["s"],
            "synth_ms_per_resource": 1000 * st["synth"]["s"] / st["synth"]["resources"],
            "floor_ms_per_resource": 1000 * st["floor"]["s"] / st["floor"]["resources"],
            "write_s": _median([r["write_s"] for r in syn]),
            "import_s": _median([r["import_s"] for r in syn]),
            "phases_s": {k: _median([r["phases"].get(k, 0.0) for r in syn]) for k in phase_keys},
            "gc_tracked_after_import": syn[0]["gc_tracked_after_import"],
            **{m: st[m] for m in MODES},
        }
        rows.append(row)
    return rows


METRICS = {"s": "wall", "cpu_s": "CPU"}


def verdict(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The targets, judged on median wall time (as stated) and, beside it, on median CPU time."""
    xs = [r["resources"] for r in rows]
    largest = rows[-1]
    out: dict[str, Any] = {"largest_slices": largest["slices"]}
    for metric, label in METRICS.items():
        v: dict[str, Any] = {}
        for key in MODES:
            slope, intercept = _lsq(xs, [r[key][metric] for r in rows])
            v[f"{key}_slope_ms_per_resource"] = 1000 * slope
            v[f"{key}_intercept_s"] = intercept
        marg = []
        for a, b in zip(rows, rows[1:]):
            dn = b["resources"] - a["resources"]
            step = {"from": a["slices"], "to": b["slices"]}
            for key in MODES:
                step[f"{key}_ms_per_added_resource"] = (
                    1000 * (b[key][metric] - a[key][metric]) / dn if dn else float("nan")
                )
            marg.append(step)
        v["marginal"] = marg
        v["ratio_at_largest"] = largest["synth"][metric] / largest["floor"][metric]
        v["ratio_met"] = v["ratio_at_largest"] <= RATIO_TARGET
        v["synth_over_replay_at_largest"] = largest["synth"][metric] / largest["replay"][metric]
        v["replay_over_floor_at_largest"] = largest["replay"][metric] / largest["floor"][metric]
        # Near-linear: the time per resource at the largest size against that at the first size
        # from 16 slices on (or the smallest), and the marginal cost of the last step against the
        # first step from 16 slices on; both at most LINEARITY_TARGET.
        base = next((r for r in rows if r["slices"] >= 16 and r is not largest), rows[0])
        v["per_resource_growth"] = (
            (largest["synth"][metric] / largest["resources"]) / (base["synth"][metric] / base["resources"])
            if base is not largest
            else None
        )
        v["per_resource_growth_sizes"] = (base["slices"], largest["slices"])
        steps = [m for m in marg if m["from"] >= 16] or marg
        if len(steps) >= 2:
            first, last = steps[0]["synth_ms_per_added_resource"], steps[-1]["synth_ms_per_added_resource"]
            v["linearity"] = last / first
            v["linearity_steps"] = (steps[0]["from"], steps[0]["to"], steps[-1]["from"], steps[-1]["to"])
        else:
            v["linearity"], v["linearity_steps"] = None, None
        checks = [x for x in (v["per_resource_growth"], v["linearity"]) if x is not None]
        v["linearity_met"] = all(x <= LINEARITY_TARGET for x in checks) if checks else None
        out[label.lower()] = v
    base = next((r for r in rows if r["slices"] >= 16 and r is not largest), rows[0])
    if base is not largest:
        out["per_resource_growth_without_gc"] = (
            (largest["synth"]["s"] - largest["synth"]["gc_s"]) / largest["resources"]
        ) / ((base["synth"]["s"] - base["synth"]["gc_s"]) / base["resources"])
    else:
        out["per_resource_growth_without_gc"] = None
    out["ratio_without_gc_at_largest"] = (largest["synth"]["s"] - largest["synth"]["gc_s"]) / (
        largest["floor"]["s"] - largest["floor"]["gc_s"]
    )
    out["ratio_met"] = out["wall"]["ratio_met"]
    out["linearity_met"] = out["wall"]["linearity_met"]
    return out


def render(rows: list[dict[str, Any]], v: dict[str, Any], meta: dict[str, Any]) -> str:
    lines = []
    hdr = (
        f"{'slices':>6} {'teams':>5} {'queues':>6} {'flav':>4} {'res':>5} | "
        f"{'synth s':>7} {'±':>4} {'cpu s':>6} {'±':>4} | {'floor s':>7} {'cpu s':>6} | {'ratio':>5} {'cpu':>5} | "
        f"{'replay s':>8} | {'synth ms/res':>12} "
        f"{'floor ms/res':>12} | {'synth RSS MiB':>13} {'floor RSS MiB':>13} | {'write s':>7} {'import s':>8}"
    )
    lines.append(hdr)
    lines.append("-" * len(hdr))
    for r in rows:
        z, sy, fl = r["size"], r["synth"], r["floor"]
        lines.append(
            f"{r['slices']:>6} {z['teams']:>5} {z['queues']:>6} {z['flavors']:>4} {r['resources']:>5} | "
            f"{sy['s']:>7.3f} {100 * sy['spread']:>3.0f}% {sy['cpu_s']:>6.3f} {100 * sy['cpu_spread']:>3.0f}% | "
            f"{fl['s']:>7.3f} {fl['cpu_s']:>6.3f} | {r['ratio']:>5.2f} {r['cpu_ratio']:>5.2f} | "
            f"{r['replay']['s']:>8.3f} | {r['synth_ms_per_resource']:>12.2f} {r['floor_ms_per_resource']:>12.2f} | "
            f"{sy['rss_peak_mib']:>6.0f} (+{sy['rss_growth_mib']:>4.0f}) "
            f"{fl['rss_peak_mib']:>6.0f} (+{fl['rss_growth_mib']:>4.0f}) | "
            f"{r['write_s']:>7.3f} {r['import_s']:>8.2f}"
        )
    lines.append(
        "  synth s = synthesize() wall time (cpu s = its user+sys CPU time); floor = bare resources of the same\n"
        "  shape; ratio = synth/floor in wall and CPU time; replay = the recorded types and inputs, same trivial\n"
        "  classes; ± = (max-min)/median; ms/res = wall ms per registered resource; RSS = peak (+ growth over the\n"
        "  RSS after imports); write = write_outputs(); import = the imports done before timing (in no figure)."
    )
    lines.append("")
    lines.append("where synth's time goes (median wall seconds):")
    cols = [
        ("config", lambda r, p: p.get("config.load", 0.0)),
        ("plan", lambda r, p: p.get("build_plan", 0.0)),
        ("deploy", lambda r, p: p.get("deploy", 0.0)),
        ("program", lambda r, p: p.get("program", 0.0)),
        ("registering", lambda r, p: p.get("engine.run", 0.0) - p.get("program", 0.0)),
        ("monitor", lambda r, p: p.get("monitor", 0.0) + p.get("monitor.outputs", 0.0)),
        ("post-plan", lambda r, p: p.get("config.load.post", 0.0) + p.get("build_plan.post", 0.0)),
        ("policy", lambda r, p: p.get("policy", 0.0)),
        ("report", lambda r, p: p.get("report", 0.0)),
        ("gc", lambda r, p: r["synth"]["gc_s"]),
        ("full gcs", lambda r, p: r["synth"]["full_gcs"]),
        ("floor gc", lambda r, p: r["floor"]["gc_s"]),
        ("replay gc", lambda r, p: r["replay"]["gc_s"]),
        ("floor mon", lambda r, p: r["floor"]["monitor_s"]),
    ]
    lines.append(f"{'slices':>6} " + " ".join(f"{name:>11}" for name, _ in cols))
    for r in rows:
        cells = []
        for name, get in cols:
            value = get(r, r["phases_s"])
            cells.append(f"{value:>11.0f}" if name == "full gcs" else f"{value:>11.3f}")
        lines.append(f"{r['slices']:>6} " + " ".join(cells))
    lines.append(
        "  config, plan, deploy: inside the program (deploy = the component constructors); program = the whole\n"
        "  program body; registering = engine.run - program (the SDK serializing inputs, resolving outputs and\n"
        "  registering, monitor included); monitor = RecordingMonitor.RegisterResource/Outputs; post-plan,\n"
        "  policy, report = synthesize's steps after the run; gc = time in the cyclic garbage collector during\n"
        "  the timed call (spread over every phase above), full gcs = generation-2 collections."
    )
    for metric, label in METRICS.items():
        m = v[label.lower()]
        lines.append("")
        lines.append(
            f"{label}: least squares, time vs resources: "
            + "; ".join(
                f"{k} {m[f'{k}_slope_ms_per_resource']:.2f} ms/resource {m[f'{k}_intercept_s']:+.3f} s" for k in MODES
            )
        )
        for step in m["marginal"]:
            lines.append(
                f"{label}: marginal cost {step['from']:>3} -> {step['to']:>3} slices, ms per added resource: "
                + ", ".join(f"{k} {step[f'{k}_ms_per_added_resource']:.2f}" for k in MODES)
            )
    lines.append("")
    w, c = v["wall"], v["cpu"]
    lines.append(
        f"target synth <= {RATIO_TARGET}x floor at {v['largest_slices']} slices: "
        f"{'MET' if w['ratio_met'] else 'NOT MET'} "
        f"(wall {w['ratio_at_largest']:.2f}x; CPU {c['ratio_at_largest']:.2f}x; "
        f"{v['ratio_without_gc_at_largest']:.2f}x with GC time taken out of both)"
    )
    lines.append(
        f"  split: replay/floor {w['replay_over_floor_at_largest']:.2f}x (the SDK on inputs of that size), "
        f"synth/replay {w['synth_over_replay_at_largest']:.2f}x (project code + typed resource classes)"
    )
    if w["linearity_met"] is not None:
        parts = []
        if w["per_resource_growth"] is not None:
            a, b = w["per_resource_growth_sizes"]
            parts.append(
                f"time per resource {b} / {a} slices: wall {w['per_resource_growth']:.2f}, "
                f"CPU {c['per_resource_growth']:.2f}, without GC {v['per_resource_growth_without_gc']:.2f}"
            )
        if w["linearity"] is not None:
            a, b, cc, d = w["linearity_steps"]
            parts.append(
                f"marginal cost {cc}->{d} / {a}->{b} slices: wall {w['linearity']:.2f}, CPU {c['linearity']:.2f}"
            )
        lines.append(
            f"target near-linear growth (each <= {LINEARITY_TARGET}): {'MET' if w['linearity_met'] else 'NOT MET'} "
            f"({'; '.join(parts)})"
        )
    return "\n".join(lines)


def _footer(meta: dict[str, Any]) -> str:
    return (
        f"[{meta['repeat']} repeats, medians; load average {meta['load_before']} before, "
        f"{meta['load_after']} after; {meta['cpus']} CPUs; "
        f"total {meta['elapsed_s']:.0f} s]"
    )


def profile(slices: int, workdir: Path) -> None:
    stack = write_stack(workdir, slices)
    shape = workdir / f"shape-{slices}.json"
    _run_worker("synth", stack, shape, workdir / f"warm-{slices}.json")  # records the shape
    _run_worker("synth", stack, shape, workdir / f"prof-synth-{slices}.json", profile=True)
    _run_worker("floor", stack, shape, workdir / f"prof-floor-{slices}.json", profile=True)
    _run_worker("replay", stack, shape, workdir / f"prof-replay-{slices}.json", profile=True)


def set_root(root: Path) -> None:
    global ROOT
    ROOT = root.resolve()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_worker":
        mode, stack, shape, out, root = argv[1:6]
        set_root(Path(root))
        worker(
            mode,
            Path(stack),
            Path(shape),
            Path(out),
            profile="--profile" in argv[6:],
        )
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="TPU slices per stack, comma-separated"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per size and kind; the median is reported")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    parser.add_argument("--keep", type=Path, help="write the stacks, shapes and raw worker results here")
    parser.add_argument(
        "--profile", type=int, metavar="SLICES", help="cProfile synth, floor and replay once each at this size"
    )
    parser.add_argument(
        "--from", dest="from_dir", type=Path, metavar="DIR", help="summarize the raw results of an earlier --keep DIR"
    )
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="project checkout to benchmark (default: the one holding this script)"
    )
    parser.add_argument(
        "--only",
        choices=("process", "worker"),
        help="process: only the whole-process synth vs stock-mocks floor (issues 21, 29), at the largest size; "
        "worker: only the in-process figures against the recording engine's floors",
    )
    parser.add_argument("--teams", type=int, help="teams at every size (cluster queues: half of them, at least 1)")
    parser.add_argument(
        "--without-tpu7x", action="store_true", help="no tpu7x pool entry (its pulumi_gcp.compute import is costly)"
    )
    args = parser.parse_args(argv)
    set_root(args.root)
    global TEAMS, WITHOUT_TPU7X
    TEAMS, WITHOUT_TPU7X = args.teams, args.without_tpu7x
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    if not sizes or sizes[0] < 1 or args.repeat < 1:
        parser.error("sizes must be positive integers and --repeat at least 1")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.from_dir is not None:
        sizes, runs = load_runs(args.from_dir)
        processes = load_process_runs(args.from_dir)
        if not sizes and processes is None:
            parser.error(
                f"{args.from_dir}: no complete results (synth-, floor- and replay-<slices>-<n>.json, "
                "or process-<kind>-<slices>-<n>.json)"
            )
        meta_file = args.from_dir / "meta.json"
        meta = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
        defaults = {"repeat": "?", "load_before": "?", "load_after": "?", "cpus": "?", "elapsed_s": 0.0}
        meta = {**defaults, **meta}
        rows = summarize(sizes, runs) if sizes else []
        _print(rows, verdict(rows) if rows else {}, meta, args.json, processes)
        return 0

    with tempfile.TemporaryDirectory(prefix="synth-bench-") as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        if args.profile:
            profile(args.profile, workdir)
            if args.keep is None:
                log("(the .prof files go with the temp dir; pass --keep DIR to keep them for pstats or snakeviz)")
            return 0
        started = time.perf_counter()
        load_before = " ".join(open("/proc/loadavg").read().split()[:3])
        rows = [] if args.only == "process" else measure(sizes, args.repeat, workdir, log)
        processes = None if args.only == "worker" else measure_processes(sizes[-1], args.repeat, workdir, log)
        meta = {
            "repeat": args.repeat,
            "load_before": load_before,
            "load_after": " ".join(open("/proc/loadavg").read().split()[:3]),
            "cpus": os.cpu_count(),
            "elapsed_s": time.perf_counter() - started,
            "python": sys.version.split()[0],
            "root": str(ROOT),
        }
        (workdir / "meta.json").write_text(json.dumps(meta, indent=2))
        _print(rows, verdict(rows) if rows else {}, meta, args.json, processes)
    return 0


def _print(
    rows: list[dict[str, Any]],
    v: dict[str, Any],
    meta: dict[str, Any],
    as_json: bool,
    processes: dict[str, Any] | None = None,
) -> None:
    if as_json:
        print(json.dumps({"meta": meta, "rows": rows, "verdict": v, "process": processes}, indent=2))
        return
    parts = [render(rows, v, meta)] if rows else []
    if processes is not None:
        parts.append(render_processes(processes))
    print("\n\n".join(parts) + "\n" + _footer(meta))


if __name__ == "__main__":
    sys.exit(main())
