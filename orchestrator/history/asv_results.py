"""An asv results folder on disk, for `tidemark import --format asv_json` (reads files only).

asv keeps `results/benchmarks.json` (what each benchmark is) and one folder per machine,
`results/<machine>/`, holding `machine.json` and one result file per commit and environment
(`<hash8>-<env>.json`). Given a machine's folder, every result file in it is imported (one run
each); given `results/` itself, every machine folder under it; given one result file, that file.
The adapter (adapters/asv_json.py) reads each with its folder's benchmarks.json and machine.json.
"""
from __future__ import annotations

from pathlib import Path

from ..adapters.asv_json import AsvFolder, parse_asv_folder
from ..errors import ConfigError

SIDECARS = ("machine.json", "benchmarks.json")


def _machine_folders(path: Path) -> list[Path]:
    if (path / "machine.json").is_file():
        return [path]
    return sorted(p for p in path.iterdir() if p.is_dir() and (p / "machine.json").is_file())


def result_files(path: Path) -> list[Path]:
    """The result files `path` names (a file, a machine's folder, or the results folder)."""
    if not path.is_dir():
        return [path]
    files = [p for folder in _machine_folders(path) for p in sorted(folder.glob("*.json"))
             if p.name not in SIDECARS]
    if not files:
        raise ConfigError(f"{path} holds no asv result file (<commit>-<env>.json beside a "
                          f"machine.json); pass asv's results/ folder, results/<machine>/ or "
                          f"one of its files")
    return files


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None


def folder_of(result_file: Path) -> AsvFolder:
    """The benchmarks.json (one level up) and machine.json (beside) of a result file; either
    may be missing (the adapter then reads the benchmark's kind from its name)."""
    machine = result_file.parent / "machine.json"
    benchmarks = result_file.parent.parent / "benchmarks.json"
    return parse_asv_folder(_read(benchmarks), _read(machine), str(result_file.parent.parent))
