"""Profiles of several launches merged into one (``xcc profile merge``): counts add up, per PTX position.

All profiles must be of the same module (its content hash); kernels are merged by name, rows by their key
(file, line and block, loop header or callee), argument values by value (at most ``MAX_VALUES`` kept, the
launches with others counted in ``other``).  The result does not depend on the order of the inputs.
"""

from __future__ import annotations

from xcc.profile.format import FORMAT, MAX_VALUES, RECORDS, VERSION, Profile, ProfileError

_NAME = {"blocks": "block", "branches": "block", "loops": "header", "calls": "callee"}


def merge_profiles(profiles: list[Profile]) -> Profile:
    """One profile with the counts of all of ``profiles`` (a :class:`ProfileError` if they name different modules)."""
    if not profiles:
        raise ProfileError("profile merge: no profiles given")
    first = profiles[0]
    for p in profiles[1:]:
        if p.module_hash != first.module_hash:
            raise ProfileError(f"{p.where}: the profile is of another module ('{p.data['module']['name']}', hash "
                               f"{p.module_hash[:12]}) than {first.where} (hash {first.module_hash[:12]})")
    kernels: dict[str, dict] = {}
    for p in sorted(profiles, key=lambda p: p.digest):
        for name, k in p.kernels.items():
            kernels[name] = _merge_kernel(kernels[name], k, p.where, name) if name in kernels else _copy(k)
    return Profile({"format": FORMAT, "version": VERSION, "module": dict(first.data["module"]),
                    "kernels": {n: kernels[n] for n in sorted(kernels)}}, "<merged profile>")


def _copy(k: dict) -> dict:
    return _merge_kernel({"launches": 0, "args": {}, **{r: [] for r in RECORDS}}, k, "", "")


def _key(rec: str, row: dict):
    if rec == "shapes":
        return (tuple(row["grid"]), tuple(row["block"]))
    return (row["file"], row["line"], row.get(_NAME.get(rec, ""), ""))


def _merge_kernel(a: dict, b: dict, where: str, name: str) -> dict:
    out = {"launches": a["launches"] + b["launches"], "args": _merge_args(a["args"], b["args"], where, name)}
    for rec, fields in RECORDS.items():
        rows = {_key(rec, r): dict(r) for r in a[rec]}
        for r in b[rec]:
            k = _key(rec, r)
            if k not in rows:
                rows[k] = {f: (dict(v) if isinstance(v, dict) else v) for f, v in r.items()}
                continue
            cur = rows[k]
            for f, kind in fields.items():
                if kind == "int" and f != "line":
                    cur[f] += r[f]
                elif kind == "reasons":
                    cur[f] = {x: cur[f].get(x, 0) + r[f].get(x, 0) for x in sorted({*cur[f], *r[f]})}
        out[rec] = [rows[k] for k in sorted(rows)]
    return out


def _merge_args(a: dict, b: dict, where: str, name: str) -> dict:
    out = {}
    for p in sorted({*a, *b}):
        x, y = a.get(p), b.get(p)
        if x is None or y is None:
            src = x or y
            out[p] = {"type": src["type"], "values": [list(v) for v in src["values"]], "other": src["other"]}
            continue
        if x["type"] != y["type"]:
            raise ProfileError(f"{where}: kernels.{name}.args.{p}: type {y['type']} differs from {x['type']}")
        counts: dict = {}
        for v, n in x["values"] + y["values"]:
            counts[v] = counts.get(v, 0) + n
        ranked = sorted(counts.items(), key=lambda vn: (-vn[1], str(vn[0])))
        kept = ranked[:MAX_VALUES]
        other = x["other"] + y["other"] + sum(n for _, n in ranked[MAX_VALUES:])
        out[p] = {"type": x["type"], "values": [[v, n] for v, n in kept], "other": other}
    return out
