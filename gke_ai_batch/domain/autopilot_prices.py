"""GKE Autopilot's list prices for Pod resource requests, in USD: the rates synth prices an
Autopilot cluster's Kueue quotas with (gke_ai_batch/domain/pricing.py, price_autopilot).

Autopilot bills the CPU, memory and ephemeral storage that running Pods request, per second, at
the rates of the compute class the Pods run on; Pods that request GPUs or TPUs, and Pods on the
Performance and Accelerator classes or a custom ComputeClass's machine types, are billed at other
rates (GPU Pod SKUs, or the node's Compute Engine price plus an Autopilot premium): GKE pricing,
"Autopilot mode", https://cloud.google.com/kubernetes-engine/pricing#autopilot_mode. The Cloud
Billing Catalog names the SKUs "Autopilot Pod mCPU Requests (REGION)", "Autopilot Pod Memory
Requests (REGION)", "Autopilot Spot Pod mCPU Requests (REGION)" and so on (service Kubernetes
Engine, CCD8-9BF1-090E; GoogleCloudPlatform/autopilot-cost-calculator calculator/pricing.go reads
them by these names).

Only what could be read is here: the general-purpose class's vCPU and memory rates in
us-central1, on-demand and Spot. GKE's pricing page renders its rate table in the browser, and
the Cloud Billing Catalog export this project reads for machine prices
(Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml) holds no Kubernetes Engine SKUs
(its build exports Compute Engine, Networking, Cloud Storage, Monitoring and Cloud SQL: build/skus.sh).
The figures were read on DATE as public cost tools and write-ups quote GKE's page (the same four
figures in each: vCPU $0.0445 and $0.0133 Spot per hour, memory $0.0049225 and $0.0014767 Spot per
GiB-hour); check them against the page before you rely on them. Ephemeral storage, other regions,
other classes and GPU or TPU Pods have no rate here: a quota that needs one gets no price with
the reason, and `gke-ai-batch:prices` can supply it (`autopilot:RESOURCE`, docs/cost.md)."""

from __future__ import annotations

DATE = "2026-11-28"
SOURCE = "https://cloud.google.com/kubernetes-engine/pricing#autopilot_mode"
GENERAL_PURPOSE = "general-purpose"
# The Kueue resource names Autopilot bills, with the unit of a rate (per hour).
UNITS = {
    "cpu": "vCPU-hour",
    "memory": "GiB-hour",
    "ephemeral-storage": "GiB-hour",
    "nvidia.com/gpu": "GPU-hour",
    "google.com/tpu": "chip-hour",
}
# An override's key in gke-ai-batch:prices: autopilot:cpu, autopilot:memory, ...
OVERRIDE_PREFIX = "autopilot:"

# (compute class, resource, region) -> (on-demand, Spot) USD per UNITS[resource].
RATES: dict[tuple[str, str, str], tuple[float, float]] = {
    (GENERAL_PURPOSE, "cpu", "us-central1"): (0.0445, 0.0133),
    (GENERAL_PURPOSE, "memory", "us-central1"): (0.0049225, 0.0014767),
}
