"""Regenerate gke_ai_batch/domain/price_table.py from Google's Cloud Billing Catalog and skypilot-catalog.

    python scripts/refresh_prices.py --billing PRICING_YML CATALOG [--billing-commit SHA] [--commit SHA]
                                     [--catalog-date YYYY-MM-DD] [--date YYYY-MM-DD]

PRICING_YML is pricing.yml of github.com/Cyclenerd/google-cloud-pricing-cost-calculator, a dated
export of Google's Cloud Billing Catalog (`compute.instance.<machine type>.cost.<region>.hour`
and `hour_spot`: the whole VM as Google bills it, its fixed GPUs and bundled Local SSD included),
or a checkout holding it. CATALOG is a checkout of github.com/skypilot-org/skypilot-catalog (its
catalogs/v8/gcp/vms.csv is read) or that CSV itself. This script downloads nothing: clone both
(`git clone --depth 1 ...`); commits are read from the checkouts when they are git checkouts.

The Cloud Billing Catalog is the primary source: every machine type of
gke_ai_batch/domain/machines.py it has is priced from it, whole. skypilot-catalog supplies what the
export lacks (TPU chips, GPUs Compute Engine bills apart such as N1's T4, machine types the export
does not carry such as a3-ultragpu-8g) and the host part of a machine with fixed GPUs (used only to
split a `gke-ai-batch:prices` override), and cross-checks the rest: where the two disagree by more
than 5% the row records which one is used and why (DECISIONS). Rows that break the table's
invariants (a spot price above its on-demand price; one accelerator's per-unit price spread across
regions beyond BAND) are dropped with the reason, or refused: a band breach needs a decision in
DROP before the table is written.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gke_ai_batch.domain import catalogue, machines as machine_types, regions  # noqa: E402

CATALOG_CSV = "catalogs/v8/gcp/vms.csv"
BILLING_FILE = "pricing.yml"
BILLING_REPO = "github.com/Cyclenerd/google-cloud-pricing-cost-calculator"
CATALOG_REPO = "github.com/skypilot-org/skypilot-catalog"
TARGET = ROOT / "gke_ai_batch" / "domain" / "price_table.py"
SPOT_PAGE = "https://cloud.google.com/spot-vms/pricing"

# The catalog names a TPU slice tpu-<name>-<N>. N counts chips for v5e and v6e but TensorCores
# (two per chip) for v4 and v5p (Cloud TPU "TPU versions": v4 and v5p chips have two
# TensorCores; v5e and v6e one). tpu7x has no rows in the catalog.
TPU_NAMES = {"v4": ("tpu-v4", 2), "v5e": ("tpu-v5litepod", 1), "v5p": ("tpu-v5p", 2), "v6e": ("tpu-v6e", 1)}
# The catalog's accelerator names of the GKE GPU types (catalogue.GPU_TYPES keys).
GPU_NAMES = {
    "nvidia-tesla-t4": "T4",
    "nvidia-l4": "L4",
    "nvidia-tesla-a100": "A100",
    "nvidia-a100-80gb": "A100-80GB",
    "nvidia-h100-80gb": "H100",
    "nvidia-h100-mega-80gb": "H100-MEGA",
    "nvidia-h200-141gb": "H200",
    "nvidia-b200": "B200",
}
# pricing.yml's GPU count keys of a machine type (Cyclenerd build/gcp.yml), checked against the catalogue.
BILLING_GPU_KEYS = {"l4": "nvidia-l4", "a100": "nvidia-tesla-a100", "a100-80gb": "nvidia-a100-80gb",
                    "h100-80gb": "nvidia-h100-80gb", "h100-80gb-mega": "nvidia-h100-mega-80gb"}
# The catalog marks "not offered" with these placeholder prices.
PLACEHOLDERS = (0.0, 700.0)
# Two sources disagree when they differ by more than this share of the primary's figure.
TOLERANCE = 0.05
# One accelerator's per-unit on-demand price may differ across regions by at most this factor. In
# the Cloud Billing Catalog the widest spread of any accelerator-optimized or G2 machine type over
# all the regions it is sold in is 1.605x (g2-standard-*: us-east4 to me-central2; A2 and A3 1.600x,
# us-central1 to me-central2): regional prices are one list price times a regional factor. A row
# outside the band is not a regional price (skypilot-catalog's H100 rows: $4.20 per GPU-hour in
# us-central1, $12.74 in europe-west4, 3x).
BAND = 1.61
# Rows a human decided to leave out, with the reason (a band breach must be decided here).
DROP: dict[tuple[str, str, str], str] = {}

DECISIONS = {
    "on-demand": (
        "on-demand differs from skypilot-catalog by more than 5%: the Cloud Billing Catalog's price is used. It is "
        "Google's SKU catalogue, the primary source, and prices the machine type whole; skypilot-catalog sums a host "
        "row and per-GPU rows whose H100, A100 and A100 80GB figures differ between regions by 2-3x (H100: $4.20 per "
        "GPU-hour in us-central1, $9.80 in us-east4) where Google's prices of one machine type differ by at most 1.6x."
    ),
    "spot": (
        "spot differs from skypilot-catalog by more than 5%: the Cloud Billing Catalog's spot price of its export "
        f"date is used. Spot prices change up to once a day ({SPOT_PAGE}), so snapshots taken on different days "
        "differ; the table keeps the primary source's, dated."
    ),
}


def _price(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if value in PLACEHOLDERS or value < 0 else value


def extract(rows) -> dict[tuple[str, str, str], tuple[float, float | None]]:
    """skypilot-catalog rows as (kind, name, region) -> (on-demand, spot) USD per unit-hour: tpu per
    chip, gpu per GPU, vm per node (the machine type without its GPUs). A region keeps its first
    zone's row (the catalog prices a region's zones alike)."""
    known_regions = set(regions.REGIONS)
    machines = _machines()
    tpu_by_name = {name: (gen, per) for gen, (name, per) in TPU_NAMES.items()}
    gpu_by_name = {name: gpu for gpu, name in GPU_NAMES.items()}
    table: dict[tuple[str, str, str], tuple[float, float | None]] = {}
    for row in rows:
        region = row["Region"]
        if region not in known_regions:
            continue
        price, spot = _price(row["Price"]), _price(row["SpotPrice"])
        if price is None:
            continue
        machine, accel, count = row["InstanceType"], row["AcceleratorName"], row["AcceleratorCount"]
        if machine:
            if machine not in machines:
                continue
            key, per = ("vm", machine, region), 1.0
        elif accel in gpu_by_name:
            key, per = ("gpu", gpu_by_name[accel], region), float(count)
        else:
            stem, _, size = accel.rpartition("-")
            if stem not in tpu_by_name or not size.isdigit():
                continue
            gen, cores = tpu_by_name[stem]
            key, per = ("tpu", gen, region), int(size) / cores
        if key not in table:
            table[key] = (round(price / per, 6), None if spot is None else round(spot / per, 6))
    return table


def read_billing(lines) -> tuple[str, dict[tuple[str, str], tuple[float, float | None]], dict[str, dict[str, float]]]:
    """pricing.yml (a 4 MB YAML file ordered by key, read line by line): its export date, the
    (machine type, region) -> (hour, hour_spot) of the machine types the catalogue knows in its
    regions, and each machine type's GPU counts."""
    machines, known_regions = _machines(), set(regions.REGIONS)
    generated = ""
    path: list[str] = []
    hours: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    gpus: dict[str, dict[str, float]] = defaultdict(dict)
    for raw in lines:
        line = raw.rstrip("\n")
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        level = (len(line) - len(line.lstrip(" "))) // 2
        key, _, value = stripped.partition(":")
        del path[level:]
        path.append(key)
        value = value.strip()
        if path == ["about", "generated"]:
            generated = datetime.datetime.strptime(value, "%a %b %d %H:%M:%S %Y").date().isoformat()
        if len(path) < 4 or path[:2] != ["compute", "instance"] or path[2] not in machines:
            continue
        if len(path) == 4 and key in BILLING_GPU_KEYS:
            gpus[path[2]][BILLING_GPU_KEYS[key]] = float(value)
        elif len(path) == 6 and path[3] == "cost" and path[4] in known_regions and key in ("hour", "hour_spot"):
            hours[(path[2], path[4])][key] = float(value)
    prices = {k: (v["hour"], v.get("hour_spot")) for k, v in hours.items() if v.get("hour")}
    return generated, prices, gpus


def _machines() -> set[str]:
    return {m for g in catalogue.GPU_TYPES.values() for m in g.machine_types} | set(machine_types.known_names())


def _fixed_gpus() -> dict[str, tuple[str, int]]:
    """machine type -> (GPU type, count) for the machine types that come with their GPUs."""
    return {m: (g.type, n) for g in catalogue.GPU_TYPES.values() for m, n in g.machine_types.items()}


def _differs(primary: float | None, other: float | None) -> bool:
    return primary is not None and other is not None and abs(other - primary) > TOLERANCE * primary


def skypilot_node(sky, machine: str, region: str) -> tuple[float, float | None] | None:
    """skypilot-catalog's figure for a whole machine: its VM row plus its fixed GPUs' rows."""
    vm = sky.get(("vm", machine, region))
    fixed = _fixed_gpus().get(machine)
    if vm is None:
        return None
    if fixed is None:
        return vm
    gpu = sky.get(("gpu", fixed[0], region))
    if gpu is None:
        return None
    spot = None if vm[1] is None or gpu[1] is None else vm[1] + fixed[1] * gpu[1]
    return vm[0] + fixed[1] * gpu[0], spot


def disagreements(billing, sky) -> dict[tuple[str, str, str], tuple[str, ...]]:
    """(vm, machine, region) -> the figures ("on-demand", "spot") on which the two sources differ by
    more than TOLERANCE."""
    out = {}
    for (machine, region), (hour, spot) in billing.items():
        other = skypilot_node(sky, machine, region)
        if other is None:
            continue
        which = tuple(w for w, a, b in (("on-demand", hour, other[0]), ("spot", spot, other[1])) if _differs(a, b))
        if which:
            out[("vm", machine, region)] = which
    return out


def build(billing, sky, billing_gpus=None):
    """(rows, dropped): rows (kind, name, region) -> (on-demand, spot, source, gpus, note); dropped
    (kind, name, region) -> why. Kinds: vm (a node of the machine type; gpus: the fixed GPUs its
    price includes), host (a machine with fixed GPUs without them, to split an override), gpu (per
    GPU, for GPUs priced apart), tpu (per chip)."""
    fixed = _fixed_gpus()
    for machine, counts in (billing_gpus or {}).items():
        want = {fixed[machine][0]: fixed[machine][1]} if machine in fixed else {}
        if counts != want:
            raise ValueError(f"pricing.yml gives {machine} the GPUs {counts}, the catalogue {want}")
    notes = disagreements(billing, sky)
    rows: dict[tuple[str, str, str], tuple] = {}
    for (machine, region), (hour, spot) in billing.items():
        key = ("vm", machine, region)
        gpus = fixed[machine][1] if machine in fixed else 0
        note = ",".join(notes.get(key, ()))
        rows[key] = (round(hour, 6), None if spot is None else round(spot, 6), "billing", gpus, note)
    for (kind, name, region), (price, spot) in sky.items():
        if kind == "tpu":
            rows[(kind, name, region)] = (price, spot, "skypilot", 0, "")
        elif kind == "vm":
            if name in fixed:
                rows[("host", name, region)] = (price, spot, "skypilot", 0, "")
            rows.setdefault(("vm", name, region), (price, spot, "skypilot", 0, ""))
    for (kind, name, region), (price, spot) in sky.items():
        # A GPU row is kept where a pool needs it: GPUs attached to general-purpose machines (T4),
        # or a machine type of it that the Cloud Billing Catalog does not price whole there.
        if kind != "gpu":
            continue
        carriers = catalogue.GPU_TYPES[name].machine_types
        if not carriers or any(("vm", m, region) in rows and not rows[("vm", m, region)][3] for m in carriers):
            rows[(kind, name, region)] = (price, spot, "skypilot", 0, "")
    dropped = {}
    for key, reason in DROP.items():
        if key in rows:
            del rows[key]
            dropped[key] = reason
    for key, (price, spot, source, _, _) in sorted(rows.items()):
        if spot is not None and spot > price:
            del rows[key]
            name = "the Cloud Billing Catalog" if source == "billing" else "skypilot-catalog"
            dropped[key] = (f"{name} gives a spot price (${spot}) above the on-demand one (${price}), which Google's "
                            f"Spot VMs never are ({SPOT_PAGE}): not a list price")
    breaches = band_breaches(rows)
    if breaches:
        raise ValueError(f"per-unit prices outside the band of {BAND}x; decide each in DROP: " + "; ".join(breaches))
    return rows, dropped


def band_groups(rows) -> dict[tuple[str, str], dict[str, float]]:
    """One accelerator's per-unit on-demand price by region: a machine type priced whole per GPU,
    a GPU type per GPU, a TPU generation per chip."""
    groups: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for (kind, name, region), (price, _, _, gpus, _) in rows.items():
        if kind == "vm" and gpus:
            groups[("vm", name)][region] = price / gpus
        elif kind in ("gpu", "tpu"):
            groups[(kind, name)][region] = price
    return groups


def band_breaches(rows) -> list[str]:
    out = []
    for (kind, name), by_region in sorted(band_groups(rows).items()):
        lo, hi = min(by_region, key=by_region.get), max(by_region, key=by_region.get)
        if by_region[hi] > BAND * by_region[lo]:
            out.append(f"{kind} {name}: ${by_region[lo]:.4f} in {lo}, ${by_region[hi]:.4f} in {hi}")
    return out


def render(rows, dropped, *, billing_commit: str, billing_date: str, catalog_commit: str, catalog_date: str,
           date: str) -> str:
    billing_url = f"{BILLING_REPO}/blob/{billing_commit}/{BILLING_FILE}"
    catalog_url = f"{CATALOG_REPO}/blob/{catalog_commit}/{CATALOG_CSV}"
    lines = [
        '"""List prices per unit-hour in USD, generated by scripts/refresh_prices.py: do not edit.',
        "",
        "Sources (SOURCES, each with its date): Google's Cloud Billing Catalog as exported in",
        "Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml (the primary source: machine types,",
        "whole) and skypilot-org/skypilot-catalog catalogs/v8/gcp/vms.csv (TPU chips, GPUs billed apart,",
        "machine types the export lacks, and the host part of machines with fixed GPUs).",
        "Keys: (kind, name, region). vm: per node-hour of a machine type as Google bills it (`gpus`: the",
        "fixed GPUs, and bundled Local SSD, its price includes); host: a machine type with fixed GPUs",
        "without them (to split a gke-ai-batch:prices override); gpu: per GPU-hour (a catalogue.GPU_TYPES",
        "key) for GPUs priced apart; tpu: per chip-hour (a catalogue.TPU_GENERATIONS key).",
        "Values: Price(on-demand, spot or None, source, gpus, note); note: the DECISIONS keys of the",
        'figures on which the sources disagree by more than 5%. DROPPED: rows left out, and why."""',
        "",
        "from typing import NamedTuple",
        "",
        "",
        "class Price(NamedTuple):",
        "    on_demand: float",
        "    spot: float | None",
        "    source: str  # a SOURCES key",
        "    gpus: int = 0  # the fixed GPUs a vm price includes",
        "    note: str = \"\"  # DECISIONS keys, comma-separated",
        "",
        "",
        f'DATE = "{date}"',
        f'SOURCE = "{billing_url} ({billing_date}); {catalog_url} ({catalog_date})"',
        "SOURCES = {",
        f'    "billing": "Cloud Billing Catalog, {billing_url}",',
        f'    "skypilot": "{catalog_url}",',
        "}",
        f'SOURCE_DATES = {{"billing": "{billing_date}", "skypilot": "{catalog_date}"}}',
        f'SPOT_NOTE = ("Spot figures: the Cloud Billing Catalog\'s of {billing_date} for machine types, '
        f'skypilot-catalog\'s of {catalog_date} for TPUs and GPUs priced apart; "',
        f'             "spot prices change up to once a day ({SPOT_PAGE}).")',
        f"TOLERANCE = {TOLERANCE}",
        f"BAND = {BAND}",
        "DECISIONS = {",
        *(f"    {k!r}: {v!r}," for k, v in DECISIONS.items()),
        "}",
        "DROPPED: dict[tuple[str, str, str], str] = {",
        *(f"    {k!r}: {dropped[k]!r}," for k in sorted(dropped)),
        "}",
        "",
        "P = Price",
        "PRICES: dict[tuple[str, str, str], Price] = {",
    ]
    for key in sorted(rows):
        price, spot, source, gpus, note = rows[key]
        args = [repr(price), repr(spot), repr(source)]
        args += ([repr(gpus)] if gpus or note else []) + ([repr(note)] if note else [])
        lines.append(f"    {key!r}: P({', '.join(args)}),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _commit(path: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return ""
    return out.stdout.strip()


def _file(path: Path, inside: str) -> tuple[Path, Path]:
    """(the file, the directory whose git commit names it)."""
    return (path / inside, path) if path.is_dir() else (path, path.parent)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("catalog", type=Path, help="a skypilot-catalog checkout, or its catalogs/v8/gcp/vms.csv")
    parser.add_argument("--billing", type=Path, required=True,
                        help="Cyclenerd/google-cloud-pricing-cost-calculator's pricing.yml, or a checkout holding it")
    parser.add_argument("--commit", help="the skypilot-catalog commit (read from the checkout when omitted)")
    parser.add_argument("--billing-commit", help="the pricing.yml commit (read from the checkout when omitted)")
    parser.add_argument("--catalog-date", default=datetime.date.today().isoformat(),
                        help="the date the catalog rows were taken")
    parser.add_argument("--date", default=datetime.date.today().isoformat(), help="the table's date")
    parser.add_argument("--out", type=Path, default=TARGET)
    args = parser.parse_args(argv)
    csv_path, csv_dir = _file(args.catalog, CATALOG_CSV)
    yml_path, yml_dir = _file(args.billing, BILLING_FILE)
    for path, what in ((csv_path, f"a skypilot-catalog checkout or its {CATALOG_CSV}"),
                       (yml_path, f"a {BILLING_FILE} or a checkout holding it")):
        if not path.is_file():
            print(f"error: {path} is not a file: give {what}", file=sys.stderr)
            return 2
    commit, billing_commit = args.commit or _commit(csv_dir), args.billing_commit or _commit(yml_dir)
    if not commit or not billing_commit:
        which = "the catalog: pass --commit SHA" if not commit else "pricing.yml: pass --billing-commit SHA"
        print(f"error: no commit for {which}", file=sys.stderr)
        return 2
    with csv_path.open(newline="") as f:
        sky = extract(csv.DictReader(f))
    with yml_path.open() as f:
        billing_date, billing, gpus = read_billing(f)
    try:
        rows, dropped = build(billing, sky, gpus)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    args.out.write_text(render(rows, dropped, billing_commit=billing_commit, billing_date=billing_date,
                               catalog_commit=commit, catalog_date=args.catalog_date, date=args.date))
    print(f"{args.out}: {len(rows)} prices ({len(dropped)} dropped) from {yml_path} at {billing_commit} "
          f"and {csv_path} at {commit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
