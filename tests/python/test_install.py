"""`make install` gives a usable library: headers, libvoxa.so, voxa.pc and
the CLI; a C program built with pkg-config links and runs."""
import os
import shutil
import subprocess

import pytest

from conftest import ROOT

PROGRAM = r"""
#include <voxa.h>
#include <stdio.h>
int main(void) {
    int64_t shape[2] = {5, 5};
    voxa_array m;
    double pt[2] = {2, 2};
    if (voxa_array_new(&m, VOXA_BOOL, 2, shape) != VOXA_OK) return 1;
    voxa_balls_params p = {.points = pt, .npoints = 1, .radius = 1};
    if (voxa_balls(&p, &m) != VOXA_OK) return 2;
    int n = 0;
    for (int i = 0; i < 25; i++) n += ((unsigned char *)m.data)[i];
    voxa_array_free(&m);
    if (voxa_balls(NULL, &m) == VOXA_OK) return 3;
    printf("%s %d %s\n", voxa_version(), n, voxa_last_error());
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None or shutil.which("pkg-config") is None,
                    reason="needs a C compiler and pkg-config")
def test_install_and_link(tmp_path):
    build = os.path.join(ROOT, "build")
    subprocess.run(["cmake", "--install", build, "--prefix", str(tmp_path / "prefix")],
                   check=True, capture_output=True)
    pc = next((tmp_path / "prefix").rglob("voxa.pc"))
    env = dict(os.environ, PKG_CONFIG_PATH=str(pc.parent))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "voxa"], env=env, check=True,
                           capture_output=True, text=True).stdout.split()
    src = tmp_path / "prog.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "prog"
    subprocess.run(["cc", "-std=c11", str(src), "-o", str(exe), *flags], check=True)
    libdir = str(pc.parent.parent)
    out = subprocess.run([str(exe)], env=dict(os.environ, LD_LIBRARY_PATH=libdir),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    version, n, msg = out.stdout.split(" ", 2)
    assert n == "5" and "NULL" in msg
    assert (tmp_path / "prefix" / "bin" / "voxa").exists()
