"""The JSON Schema of a stack file, generated from the config models.

Stack files reference the committed copy (schema/stack.schema.json) so editors complete and
check keys; a test fails when the models and the committed copy drift apart.

    python -m gke_ai_batch.config.schema > schema/stack.schema.json
"""

from __future__ import annotations

import json
from typing import Any

from gke_ai_batch.config import NAMESPACE
from gke_ai_batch.config.stack import StackConfig


def stack_file_schema() -> dict[str, Any]:
    model = StackConfig.model_json_schema(by_alias=True, mode="validation")
    defs = model.pop("$defs", {})
    ours = {f"{NAMESPACE}:{key}": value for key, value in model["properties"].items()}
    required = [f"{NAMESPACE}:{key}" for key in model.get("required", [])]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/gke-ai-batch/gke-ai-batch/schema/stack.schema.json",
        "title": "gke-ai-batch stack file (stacks/Pulumi.<stack>.yaml)",
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "description": "Pulumi config. gke-ai-batch:* keys are checked here; other "
                "namespaces (gcp:project, gcp:region, kubernetes:...) belong to their providers.",
                "properties": {
                    **ours,
                    "gcp:project": {"type": "string", "description": "Google Cloud project to deploy into."},
                    "gcp:region": {"type": "string", "description": "Default region (cluster.location)."},
                },
                "required": ["gcp:project", *required],
                "patternProperties": {f"^(?!{NAMESPACE}:)[A-Za-z0-9_.-]+:": {}},
                "additionalProperties": False,
            },
            "secretsprovider": {"type": "string"},
            "encryptedkey": {"type": "string"},
            "encryptionsalt": {"type": "string"},
            "environment": {},
        },
        "additionalProperties": False,
        "$defs": defs,
    }


def render() -> str:
    return json.dumps(stack_file_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    from gke_ai_batch.domain import cli

    cli.parser("python -m gke_ai_batch.config.schema", __doc__).parse_args()
    print(render(), end="")
