"""schemathesis against `grk serve`, every check on: what the OpenAPI document allows is accepted,
what it refuses is refused, every answer matches its documented schema, status and headers.
Bounded (a fixed seed, a few dozen examples per operation) so it runs in CI's time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import Served

SEED = "20261202"
EXAMPLES = "40"


def test_every_check_passes_on_every_operation(grk: Served, tmp_path: Path) -> None:
    run = subprocess.run(
        [
            str(Path(sys.executable).parent / "schemathesis"),
            "run",
            f"{grk.base_url}/openapi.json",
            "--checks",
            "all",
            "--seed",
            SEED,
            "--max-examples",
            EXAMPLES,
            "--workers",
            "1",
            "--no-color",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
    )
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    # The four tools, the three resources and the prompt.
    assert "Operations:       8 selected / 8 total" in report, report
    assert " failed" not in report.split("SUMMARY")[-1], report
