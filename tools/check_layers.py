#!/usr/bin/env python3
"""Check the layering of src/: no edge between two op families, no cycle
between layers.

Every file under src/ belongs to one layer: src/core, src/io, src/registry,
src/stream, src/backend, or one op family src/ops/<family>. An edge A -> B
joins two layers when a file of A
  - includes a header of B (`#include "..."`, resolved as the compiler does:
    the file's folder, include/, src/core/, src/; the generated op_table.h
    stands for every descriptor voxa__op_<name>), or
  - uses a voxa_/voxa__ symbol (function or variable) that a file of B
    defines (top-level definitions, found after removing comments, strings
    and preprocessor lines).
Public headers (include/) declare everything and are not a layer: what
counts is where a symbol is defined.

It fails (exit 1, one line per problem) on
  - any edge between two different op families (a family shares code
    through src/core, never with another family), and
  - any cycle in the graph of layers (each family is its own node),
and lists the edges with --verbose. Run by `make test`.
Usage: tools/check_layers.py [--root DIR] [--verbose]"""
import argparse
import os
import re
import sys
from collections import defaultdict

LAYERS = ("core", "io", "registry", "stream", "backend", "pipeline")
SYMBOL = re.compile(r"\bvoxa_\w+")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
FUNC_DEF = re.compile(r"\b(voxa_\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*$")
VAR_DEF = re.compile(r"\b(voxa_\w+)\s*(?:\[[^\]]*\]\s*)*=")


def layer_of(rel):
    """'src/ops/morph/x.c' -> 'ops/morph'; 'src/core/x.c' -> 'core'; else None."""
    parts = rel.split("/")
    if len(parts) >= 4 and parts[0] == "src" and parts[1] == "ops":
        return "ops/" + parts[2]
    if len(parts) >= 3 and parts[0] == "src" and parts[1] in LAYERS:
        return parts[1]
    return None


def strip(text):
    """Source without comments, string/char literals; and the same without
    preprocessor lines (for finding definitions)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    code = "".join(out)
    no_pp = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", code, flags=re.M)
    return code, no_pp


def definitions(code):
    """voxa_ names defined at file scope: functions (name(...) {) and
    variables (name = ..., name[...] = ...; not extern)."""
    found, depth, stmt = set(), 0, []
    for c in code:
        if depth == 0:
            if c == "{":
                text = "".join(stmt)
                m = FUNC_DEF.search(text) or VAR_DEF.search(text)
                if m and not re.match(r"\s*extern\b", text):
                    found.add(m.group(1))
                stmt = []
                depth = 1
            elif c == ";":
                text = "".join(stmt)
                m = VAR_DEF.search(text)
                if m and not re.match(r"\s*extern\b", text):
                    found.add(m.group(1))
                stmt = []
            else:
                stmt.append(c)
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                stmt = []
    return found


def resolve(root, rel, name):
    here = os.path.dirname(rel)
    for base in (here, "include", "src/core", "src"):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None  # generated (op_table.h) or system


def scan(root):
    files, problems = {}, []
    for dirpath, _, names in os.walk(os.path.join(root, "src")):
        for nm in sorted(names):
            if not nm.endswith((".c", ".h")):
                continue
            rel = os.path.relpath(os.path.join(dirpath, nm), root).replace(os.sep, "/")
            lay = layer_of(rel)
            if lay is None:
                problems.append(f"{rel}: not inside a layer (src/<layer>/ or "
                                f"src/ops/<family>/)")
                continue
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                text = f.read()
            code, no_pp = strip(text)
            files[rel] = dict(layer=lay, includes=INCLUDE.findall(text),
                              uses=set(SYMBOL.findall(code)), defs=definitions(no_pp))
    return files, problems


def edges_of(root, files):
    """(layer A, layer B) -> list of reasons."""
    owner = defaultdict(set)
    for rel, f in files.items():
        for s in f["defs"]:
            owner[s].add(rel)
    edges = defaultdict(list)
    for rel, f in sorted(files.items()):
        for inc in f["includes"]:
            tgt = resolve(root, rel, inc)
            if tgt is None and inc == "op_table.h":  # generated: every descriptor
                for s in sorted(x for x in owner if x.startswith("voxa__op_")):
                    for t in sorted(owner[s]):
                        if files[t]["layer"] != f["layer"]:
                            edges[(f["layer"], files[t]["layer"])].append(
                                f"{rel} includes op_table.h ({s}, {t})")
                continue
            lay = tgt and layer_of(tgt)
            if lay and lay != f["layer"]:
                edges[(f["layer"], lay)].append(f"{rel} includes {tgt}")
        for s in sorted(f["uses"] - f["defs"]):
            for tgt in sorted(owner.get(s, ())):
                lay = files[tgt]["layer"]
                if lay != f["layer"]:
                    edges[(f["layer"], lay)].append(f"{rel} uses {s} ({tgt})")
    return edges


def cycles(nodes, edges):
    """Strongly connected components with more than one layer (Tarjan)."""
    graph = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index, low, stack, on, out, count = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = count[0]
        count[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--verbose", action="store_true", help="list every edge between layers")
    args = ap.parse_args(argv)
    files, problems = scan(args.root)
    edges = edges_of(args.root, files)
    for (a, b), why in sorted(edges.items()):
        if a.startswith("ops/") and b.startswith("ops/"):
            problems += [f"family edge {a} -> {b}: {w}" for w in why]
    nodes = {f["layer"] for f in files.values()}
    for comp in cycles(nodes, edges):
        inside = [(a, b) for (a, b) in sorted(edges) if a in comp and b in comp]
        detail = "; ".join(f"{a} -> {b}: {edges[(a, b)][0]}" for a, b in inside)
        problems.append(f"layer cycle {' <-> '.join(comp)}: {detail}")
    if args.verbose:
        for (a, b), why in sorted(edges.items()):
            print(f"{a} -> {b} ({len(why)}): {why[0]}")
    for p in problems:
        print(f"check_layers: {p}", file=sys.stderr)
    print(f"check_layers: {len(files)} files, {len(nodes)} layers, {len(edges)} edges, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
