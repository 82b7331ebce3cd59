"""voxa.pipeline: run a recipe (a TOML file or a dict) like `voxa pipeline`.

The recipe goes to the same C runner as the command line (src/pipeline):
the same checks and messages, the same resume rules, run.json and
report.html. A dict is written as recipe text first (its keys: "pipeline",
"inputs" and "steps", a list of step dicts; see docs/pipeline.md), with
relative paths taken from `base_dir` (default: the current folder).
"""
import math
import os
import re

from . import _voxa

__all__ = ["pipeline", "recipe_text"]

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k):
    if not isinstance(k, str):
        raise TypeError(f"recipe keys must be strings, got {k!r}")
    return k if _BARE.match(k) else _string(k)


def _string(s):
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _value(v, where):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int) or (hasattr(v, "dtype") and getattr(v.dtype, "kind", "") in "iu"
                              and getattr(v, "ndim", 1) == 0):
        return str(int(v))
    if isinstance(v, float) or (hasattr(v, "dtype") and getattr(v.dtype, "kind", "") == "f"
                                and getattr(v, "ndim", 1) == 0):
        f = float(v)
        if not math.isfinite(f):
            raise ValueError(f"{where}: {f} is not a finite number")
        return repr(f)
    if isinstance(v, (str, os.PathLike)):
        return _string(os.fspath(v))
    if isinstance(v, (list, tuple)) or hasattr(v, "tolist"):
        seq = v.tolist() if hasattr(v, "tolist") else v
        return "[" + ", ".join(_value(x, where) for x in seq) + "]"
    raise TypeError(f"{where}: cannot write {type(v).__name__} in a recipe")


def recipe_text(recipe):
    """The TOML text of a recipe given as a dict: optional "pipeline" and
    "inputs" tables, then "steps" (or "step"), a list of dicts."""
    if not isinstance(recipe, dict):
        raise TypeError(f"recipe: expected a dict, got {type(recipe).__name__}")
    unknown = set(recipe) - {"pipeline", "inputs", "steps", "step"}
    if unknown:
        raise ValueError(f"recipe: unknown key {sorted(unknown)[0]!r} (expected pipeline, "
                         f"inputs and steps)")
    lines = []
    for table in ("pipeline", "inputs"):
        if table in recipe:
            if not isinstance(recipe[table], dict):
                raise TypeError(f"recipe[{table!r}]: expected a dict")
            lines.append(f"[{table}]")
            for k, v in recipe[table].items():
                lines.append(f"{_key(k)} = {_value(v, f'{table}.{k}')}")
            lines.append("")
    steps = recipe.get("steps", recipe.get("step", []))
    if not isinstance(steps, (list, tuple)):
        raise TypeError("recipe['steps']: expected a list of dicts")
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise TypeError(f"recipe['steps'][{i}]: expected a dict")
        lines.append("[[step]]")
        for k, v in step.items():
            lines.append(f"{_key(k)} = {_value(v, f'step {i + 1}: {k}')}")
        lines.append("")
    return "\n".join(lines)


def _size(mem_limit):
    if mem_limit is None:
        return 0
    if isinstance(mem_limit, str):
        m = re.fullmatch(r"\s*([0-9.]+)\s*([kKmMgGtT]?)[bB]?\s*", mem_limit)
        if not m:
            raise ValueError(f"mem_limit: expected a size such as '512M', got {mem_limit!r}")
        scale = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[m.group(2).lower()]
        mem_limit = float(m.group(1)) * scale
    mem_limit = int(mem_limit)
    if mem_limit <= 0:
        raise ValueError(f"mem_limit: must be > 0, got {mem_limit}")
    return mem_limit


def pipeline(recipe, *, base_dir=None, mem_limit=None, force=False, dry_run=False,
             progress=None):
    """Run a pipeline recipe: a path to a .toml file, or a dict.

    Steps whose outputs are up to date are skipped (force=True reruns them);
    dry_run=True decides and plans without running. mem_limit (bytes, or a
    string such as "512M") overrides the recipe's. progress(done, total) is
    called within each step; returning False cancels.

    Returns a dict: run_json and report (paths), output_dir, plan (the text
    of `voxa pipeline --dry-run`), steps (a list of dicts with name, op,
    state, why, output, in run order). A wrong recipe raises ValueError
    naming the line and key; a failing step raises RuntimeError (run.json
    records which).
    """
    kw = dict(mem_limit=_size(mem_limit), force=bool(force), dry_run=bool(dry_run),
              progress=progress)
    if isinstance(recipe, dict):
        text = recipe_text(recipe).encode("utf-8")
        base = os.fspath(base_dir) if base_dir is not None else "."
        return _voxa.pipeline_run(text=text, name="recipe", base_dir=base, **kw)
    if isinstance(recipe, (str, bytes, os.PathLike)):
        if base_dir is not None:
            raise TypeError("base_dir: only for a recipe given as a dict (a file's paths are "
                            "relative to its folder)")
        return _voxa.pipeline_run(path=recipe, **kw)
    raise TypeError(f"recipe: expected a path or a dict, got {type(recipe).__name__}")
