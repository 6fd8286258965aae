"""Run by `make install-check` in a venv with a regular (non-editable) install of xcc:
the distribution must provide exactly the `xcc` namespace and work end to end."""

import importlib
import importlib.metadata as md
import sys
from pathlib import Path

dist = md.distribution("xcc")
top = sorted({Path(str(f)).parts[0] for f in dist.files if not str(f).startswith(("xcc-", "../"))
              and Path(str(f)).parts[0] not in ("__pycache__",)})
print("top-level entries installed:", top)
assert top == ["xcc"], f"the distribution installs more than the xcc namespace: {top}"
for name in ("xcc", "xcc.ir", "xcc.semantics", "xcc.frontend", "xcc.passes", "xcc.backend", "xcc.runtime"):
    mod = importlib.import_module(name)
    assert "site-packages" in mod.__file__, f"{name} imported from {mod.__file__}, not the installed copy"
from xcc.backend.machine import load_machine  # noqa: E402
from xcc.frontend.parser import parse  # noqa: E402

assert load_machine("xg1").name == "xg1"  # package data: machines/*.toml
parse(".version 8.0\n.target sm_80\n.address_size 64\n")  # package data: ptx.lark
print("install check passed:", sys.prefix)
