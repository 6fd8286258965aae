"""Run by `make install-check` in a venv with a regular (non-editable) install of xcc:
the distribution must provide exactly the `xcc` namespace and work end to end."""

import importlib
import importlib.metadata as md
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
PACKAGES = setup["packages"]
# every source folder with an __init__.py must be a listed package (a new subpackage left out of
# pyproject.toml would be missing from a regular install)
folders = {str(Path(d).as_posix()) for d in setup["package-dir"].values()}
for init in sorted(ROOT.glob("*/**/__init__.py")):
    rel = init.parent.relative_to(ROOT).as_posix()
    if rel.split("/")[0] in {d.split("/")[0] for d in folders} and rel not in folders:
        raise AssertionError(f"{rel} has an __init__.py but is not a package in pyproject.toml")

dist = md.distribution("xcc")
top = sorted({Path(str(f)).parts[0] for f in dist.files if not str(f).startswith(("xcc-", "../"))
              and Path(str(f)).parts[0] not in ("__pycache__",)})
print("top-level entries installed:", top)
assert top == ["xcc"], f"the distribution installs more than the xcc namespace: {top}"
for name in PACKAGES:
    mod = importlib.import_module(name)
    assert "site-packages" in mod.__file__, f"{name} imported from {mod.__file__}, not the installed copy"
from xcc.backend.machine import load_machine  # noqa: E402
from xcc.frontend.parser import parse  # noqa: E402

assert load_machine("xg1").name == "xg1"  # package data: machines/*.toml
parse(".version 8.0\n.target sm_80\n.address_size 64\n")  # package data: ptx.lark
print("install check passed:", sys.prefix)
