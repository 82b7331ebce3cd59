"""Small array helpers shared by the Python modules."""


def native(a):
    """`a` in native byte order (the C library reads native values only);
    a copy only when it is big-endian."""
    if a.dtype.byteorder == ">":
        return a.astype(a.dtype.newbyteorder("="))
    return a
