"""make bench: run every bench/bench_*.py in its own process (so peak memory
figures do not mix) and print their markdown tables. Pass names to run a
subset: python bench/run.py label balls."""
import glob
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from common import machine  # noqa: E402

wanted = sys.argv[1:]
print(f"# voxa benchmarks\n\nmachine: {machine()}\n")
failed = []
for path in sorted(glob.glob(os.path.join(here, "bench_*.py"))):
    name = os.path.basename(path)[6:-3]
    if wanted and name not in wanted:
        continue
    sys.stdout.flush()
    rc = subprocess.call([sys.executable, path])
    if rc:
        failed.append(name)
if failed:
    print(f"benchmarks failed: {', '.join(failed)}")
    sys.exit(1)
