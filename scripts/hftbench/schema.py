"""Validation of a client result against bench-config/schema/result.schema.json (Contract 3)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema

from . import paths


@functools.cache
def _validator(schema_path: Path) -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def result_errors(doc: Any, schema_path: Path | None = None) -> list[str]:
    """Every schema violation of `doc` as "<json path>: <message>"; empty when valid."""
    validator = _validator(Path(schema_path or paths.result_schema_file()).resolve())
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    return [f"{e.json_path}: {e.message}" for e in errors]


def check_result(doc: Any, schema_path: Path | None = None) -> str | None:
    """None when `doc` is a valid result, else a one-line summary of the problems."""
    errors = result_errors(doc, schema_path)
    if not errors:
        return None
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"result does not match result.schema.json: {errors[0]}{more}"
