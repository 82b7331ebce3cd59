"""scipy.ndimage's binary morphology arguments on top of voxa's C kernels.

voxa's C kernels (morphology._morph) take a footprint, an iteration count
and a border value. This module adds every other argument scipy.ndimage
accepts, exactly:

- `origin`: the structure embedded, shifted, in a zero-padded array
  (_ndsupport.shifted_footprint); the C footprint path then runs it, so a
  shifted ball or box costs what a general footprint of its size costs.
- `axes`: the structure gets size-1 axes elsewhere (scipy's own rule).
- `mask`: only voxels where the mask is true may change, at each
  iteration. iterations == 1: one C call and a select. iterations > 1: one C
  call per iteration. iterations < 1 (until stable) with a structure of
  size <= 3 per axis that is centrosymmetric and contains its centre (the
  default, binary_propagation's and fill_holes' case): a masked dilation
  repeated until stable reaches exactly the mask voxels connected, through
  mask or input voxels, to an input voxel (or to the border when
  border_value is 1), so it is one voxa.label call: O(N) whatever the
  number of iterations scipy would run. Masked erosion is the same on the
  complement. Other structures loop, one C call per iteration; results that
  cycle instead of settling (an element without its centre) raise
  ValueError, where scipy loops for ever.
- `output`: an array of any real dtype (also the input itself) receives
  0/1; anything else that is not an array gives a new bool array, as scipy.
- structures of any dtype (non-zero = true), nested lists, even sizes, no
  true element at all (erosion then gives all true, dilation all false, as
  scipy); 0-d inputs (as shape (1,)) and empty inputs.
- binary_propagation and binary_hit_or_miss, composed from the above.
`brute_force` is accepted and ignored: it never changes scipy's result.
"""
import operator

import numpy as np

from . import _ndsupport as nds
from . import morphology

__all__ = ["binary_propagation", "binary_hit_or_miss"]

_STAGES = {"dilate": ("dilate",), "erode": ("erode",), "open": ("erode", "dilate"),
           "close": ("dilate", "erode")}


def _border(border_value):
    if isinstance(border_value, (bool, np.bool_)):
        return int(bool(border_value))
    try:
        return 1 if operator.index(border_value) else 0
    except TypeError:
        raise TypeError(f"border_value must be an integer (non-zero = 1), got "
                        f"{border_value!r}") from None


def _c(op, x, fp, iterations, bv, extras=(None,) * 5, out=None):
    """One call of the C kernel: op with footprint fp (None = scipy's
    default element, or one named by extras) into a new bool array or `out`."""
    if out is None:
        out = np.empty(x.shape, dtype=bool)
    morphology._morph(op, x, fp, iterations, None, out, bv, 0, False, *extras)
    return out


def _propagable(fp):
    """fp as a (3,)*ndim centrosymmetric footprint containing its centre, or
    None when it is not one (then the masked until-stable case loops)."""
    if any(n not in (1, 3) for n in fp.shape):
        return None
    f3 = np.zeros((3,) * fp.ndim, dtype=bool)
    f3[tuple(slice(1 - n // 2, 2 + n // 2) for n in fp.shape)] = fp
    if not f3[(1,) * fp.ndim] or not np.array_equal(f3, f3[(slice(None, None, -1),) * fp.ndim]):
        return None
    return f3


def _propagate(x, mask, f3, bv):
    """Masked dilation by f3 repeated until stable, in one labelling: a mask
    voxel ends true iff it is connected (f3-neighbours, through voxels that
    are in the mask or true) to a true voxel, or to the border when bv."""
    from .measure import label
    seeds = x.copy()
    if bv:
        seeds |= mask & _c("dilate", np.zeros(x.shape, dtype=bool), f3, 1, 1)
    lab, n = label(mask | x, f3, output=np.int64 if x.size >= 2**31 else np.int32)
    hit = np.zeros(n + 1, dtype=bool)
    hit[lab[seeds]] = True
    hit[0] = False
    return x | (mask & hit[lab])


def _stage(op, x, fp, iterations, mask, bv):
    """One of erosion/dilation with scipy's mask and iterations rules; x bool."""
    if not fp.any():  # AND over nothing is true, OR over nothing false
        r = np.full(x.shape, op == "erode")
        return r if mask is None else np.where(mask, r, x)
    if mask is None:
        return _c(op, x, fp, iterations, bv)
    if iterations < 1:
        f3 = _propagable(fp)
        if f3 is not None and op == "dilate":
            return _propagate(x, mask, f3, bv)
        if f3 is not None:  # erosion = dilation of the complement (f3 is symmetric)
            return ~_propagate(~x, mask, f3, 1 - bv)
    done, seen, power, lam = 0, x, 1, 0
    centred = bool(fp[tuple(n // 2 for n in fp.shape)])  # then the results settle
    while True:
        y = np.where(mask, _c(op, x, fp, 1, bv), x)
        done += 1
        changed = not np.array_equal(x, y)
        x = y
        if (iterations >= 1 and done >= iterations) or (iterations < 1 and not changed):
            return x
        if iterations < 1 and not centred:  # Brent's cycle detection, as morph.c's repeat
            lam += 1
            if np.array_equal(seen, x):
                raise ValueError(f"{op[:-1]}ion: iterations < 1 (until stable) never settles: "
                                 f"the results repeat every {lam} iterations (the structure, "
                                 "shifted by origin, lacks its centre; scipy loops for ever "
                                 "here)")
            if lam == power:
                seen, power, lam = x, power * 2, 0


def binary_op(op, input, structure, iterations, mask, output, border_value, origin,
              brute_force, axes, extras):
    """scipy.ndimage.binary_<op> with every scipy argument; `extras` are
    voxa's (ball, diamond, box, connectivity, spacing) keywords."""
    try:
        iterations = operator.index(iterations)
    except TypeError:
        raise TypeError(f"iterations parameter should be an integer, got "
                        f"{iterations!r}") from None
    a = nds.binary_input(input)
    axes = nds.check_axes(axes, a.ndim)
    bv = _border(border_value)
    named = any(e is not None for e in extras)
    if named and structure is not None:
        raise ValueError("give one of structure, ball, diamond, box, connectivity")
    if named and len(axes) < a.ndim:
        raise ValueError("ball=, diamond=, box=, connectivity= act on every axis: "
                         "pass structure= with axes=")
    if mask is not None:
        mask = np.asarray(mask)
        if mask.shape != a.shape:
            raise nds.RankError(f"mask and input must have equal sizes (mask {mask.shape}, "
                               f"input {a.shape})")
        mask = mask != 0
    if isinstance(output, np.ndarray):
        if np.iscomplexobj(output):
            raise TypeError(f"Complex output type not supported (output dtype {output.dtype})")
        if output.shape != a.shape:
            raise nds.RankError(f"output shape not correct: {output.shape}, input {a.shape}")
    else:
        output = None  # scipy: anything but an array gives a new bool array

    fast = structure  # what the C call gets on the plain path (None: default)
    if named and (mask is not None or a.ndim == 0 or a.size == 0
                  or any(nds.normalize_sequence(origin, len(axes)))):
        fast = s = _named_element(a.ndim, *extras)  # materialised: the general path
        extras = (None,) * 5
    elif named:
        s = None
    elif structure is None and len(axes) == a.ndim:
        s = None  # scipy's default element, built below only if needed
    else:
        s = nds.structure_array(structure, a.ndim, axes)
    s_shape = s.shape if s is not None else ((1,) if named else (3,)) * a.ndim
    org = nds.origin_list(origin, a.ndim, axes, s_shape)
    if (mask is None and a.ndim > 0 and a.size and len(axes) == a.ndim and not any(org)
            and (s is None or s.any())):
        # scipy's own structure (or voxa's named element) at origin 0: the C
        # path that recognises balls, diamonds and boxes, with no copy.
        fp = None if fast is None else _keep_subclass(fast, s)
        direct = (output is not None and output.dtype in (np.bool_, np.uint8)
                  and not np.may_share_memory(a, output))
        res = _c(op, a, fp, iterations, bv, extras, output if direct else None)
        if output is None or direct:
            return res
        output[...] = res
        return output

    if s is None:
        s = nds.structure_array(None, a.ndim, axes)
    fp = nds.shifted_footprint(s, org)
    shape = a.shape
    if a.ndim == 0:
        a, fp = a.reshape(1), fp.reshape(1)
        mask = None if mask is None else mask.reshape(1)
    if a.size == 0:
        res = np.zeros(a.shape, dtype=bool)
    else:
        x = a if a.dtype == np.bool_ else a != 0
        if mask is None and fp.any():
            res = _c(op, x, fp, iterations, bv)
        else:
            for stage in _STAGES[op]:
                x = _stage(stage, x, fp, iterations, mask, bv)
            res = x
    res = res.reshape(shape)
    if output is None:
        return res
    output[...] = res
    return output


def _keep_subclass(structure, s):
    """The structure for the C call: a bool array as given (voxa.ball keeps
    its spacing hint), else the bool array s (non-zero = true, as scipy)."""
    if isinstance(structure, np.ndarray) and structure.dtype == np.bool_:
        return structure
    return s


def _named_element(ndim, ball, diamond, box, connectivity, spacing):
    if ball is not None:
        return morphology.ball(ball, spacing=spacing, ndim=ndim) if spacing is not None \
            else morphology.ball(ball, ndim=ndim)
    if spacing is not None:
        raise ValueError("spacing applies to ball elements only")
    if diamond is not None:
        return morphology.diamond(diamond, ndim=ndim)
    if box is not None:
        b = [int(box)] * ndim if np.isscalar(box) else [int(v) for v in box]
        if len(b) != ndim or min(b) < 1:
            raise ValueError(f"box {box!r}: expected {ndim} sizes >= 1")
        return np.ones(b, dtype=bool)
    if int(connectivity) < 1:
        raise ValueError(f"connectivity {connectivity} must be >= 1")
    return nds.generate_binary_structure(ndim, int(connectivity))


def binary_propagation(input, structure=None, mask=None, output=None, border_value=0,
                       origin=0, *, axes=None):
    """scipy.ndimage.binary_propagation: dilation repeated until stable, only
    inside `mask`. With a structure of size <= 3 per axis, centrosymmetric
    with its centre (the default), this is one labelling, O(N)."""
    return binary_op("dilate", input, structure, -1, mask, output, border_value, origin,
                     False, axes, (None,) * 5)


def binary_hit_or_miss(input, structure1=None, structure2=None, output=None, origin1=0,
                       origin2=None, *, axes=None):
    """scipy.ndimage.binary_hit_or_miss: voxels where structure1 fits the
    foreground and structure2 (default: not structure1) fits the background
    (outside the volume counts as background for structure2, as in scipy)."""
    a = nds.binary_input(input)
    axes_t = nds.check_axes(axes, a.ndim)
    s1 = nds.generate_binary_structure(len(axes_t), 1) if structure1 is None \
        else np.asarray(structure1)
    s2 = np.logical_not(s1) if structure2 is None else np.asarray(structure2)
    o1 = nds.normalize_sequence(origin1, len(axes_t))
    o2 = o1 if origin2 is None else nds.normalize_sequence(origin2, len(axes_t))
    if isinstance(output, np.ndarray):
        if np.iscomplexobj(output):
            raise TypeError(f"Complex output type not supported (output dtype {output.dtype})")
        if output.shape != a.shape:
            raise nds.RankError(f"output shape not correct: {output.shape}, input {a.shape}")
    fg = binary_op("erode", a, s1, 1, None, None, 0, o1, False, axes, (None,) * 5)
    bg = binary_op("erode", a == 0, s2, 1, None, None, 1, o2, False, axes, (None,) * 5)
    res = fg & bg
    if isinstance(output, np.ndarray):
        output[...] = res
        return output
    return res
