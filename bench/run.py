"""make bench: run every bench/bench_*.py in its own process (so peak memory
figures do not mix) and print their markdown tables. Pass names to run a
subset: python bench/run.py label balls. Options starting with -- go to every
script (python bench/run.py frontier --quick)."""
import glob
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from common import machine  # noqa: E402

wanted = [a for a in sys.argv[1:] if not a.startswith("--")]
flags = [a for a in sys.argv[1:] if a.startswith("--")]
print(f"# voxa benchmarks\n\nmachine: {machine()}\n")
failed = []
for path in sorted(glob.glob(os.path.join(here, "bench_*.py"))):
    name = os.path.basename(path)[6:-3]
    if wanted and name not in wanted:
        continue
    sys.stdout.flush()
    rc = subprocess.call([sys.executable, path] + flags)
    if rc:
        failed.append(name)
if failed:
    print(f"benchmarks failed: {', '.join(failed)}")
    sys.exit(1)
