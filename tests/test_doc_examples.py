"""Every code block of README.md and docs/ that a reader would run or copy runs here as written
(tests/support/docblocks.py says how, per language), or is marked as an excerpt on purpose:
`<!-- skip: next "why" -->` before it (`grep -rn 'skip: next' README.md docs/` lists them)."""

from __future__ import annotations

import textwrap

import pytest

from conftest import ROOT
from support import docblocks


@pytest.mark.parametrize("page", docblocks.PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_block_runs_or_is_marked(page, tmp_path):
    failures = docblocks.run_page(page, tmp_path).failures
    if failures:
        pytest.fail(f"{page.relative_to(ROOT)}, at these lines:\n" + "\n".join(failures), pytrace=False)


BROKEN = '''```
unlabeled
```

```bash
echo a language no runner knows
```

<!-- skip: next -->
```sh
gcloud marked without a reason
```

```sh
gcloud auth login
```

```python
TpuSlices("v6e", {})
```

```python
import pulumi
from gke_ai_batch.components.nodepools import TpuSlices

TpuSlices("v6e", {"cluster": {"name": "c", "location": "us-east5", "project": "acme-ml"}, "version": "v6e", "topology": "4x5"})
```

```yaml
gke-ai-batch:nodePools:
  - {name: v5e-spot, slices: 0}
```

<!-- example: files=tests/fixtures/docs/topology-refused -->
```console
$ python -m synth --config bad/Pulumi.dev.yaml
bad/Pulumi.dev.yaml:12:7: gke-ai-batch:nodePools[0].tpu.topology: '4x4' is not a v6e topology
```

<!-- example: excerpt-of=examples/existing-cluster/__main__.py -->
```python
import os
```

```json
{"stack-budgit": "mandatory"}
```

<!-- example: stack=dev -->
'''


def test_a_block_that_fails_or_is_neither_run_nor_marked_fails_its_page(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(BROKEN)
    failures = docblocks.run_page(page, tmp_path / "scratch").failures
    said = {int(f.split(":", 1)[0]): f for f in failures if f[0].isdigit()}
    expected = {
        1: "neither run nor marked",
        5: "neither run nor marked",
        9: "with its reason",
        14: "does not run offline here",
        18: "exit 70): NameError: name 'TpuSlices' is not defined",
        22: "'4x5' is not a v6e topology",
        29: "synth exits 2",
        35: "prints otherwise: line 1 is",
        41: "not a line of examples/existing-cluster/__main__.py",
        45: "'stack-budgit' is no policy of this pack",
        49: "applies to no code block",
    }
    assert {n: words in said.get(n, "") for n, words in expected.items()} == dict.fromkeys(expected, True), "\n".join(failures)
