"""Helpers on chunks and task trees shared by voxa.dask's modules."""
import dask


def at_least(chunks, m):
    """`chunks` of one axis, neighbours merged until each has at least m
    voxels (a short last one joins the one before; a short axis is one chunk)."""
    out, run = [], 0
    for c in chunks:
        run += c
        if run >= m:
            out.append(run)
            run = 0
    if run:
        if out:
            out[-1] += run
        else:
            out.append(run)
    return tuple(out)


def tree(parts, join):
    """Delayed `parts` joined pairwise, level by level, into one: a binary
    tree of join(a, b) tasks (order kept, so a join need not commute)."""
    while len(parts) > 1:
        parts = [dask.delayed(join)(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]
