"""report.html: self-contained (every picture a data: URI, no script, font or
link), and it renders in headless Chromium (Debian's `chromium`, installed by
tools/setup-deps.sh) without network access: a screenshot that is not blank,
and Chromium's own network log shows no request made by the page."""
import base64
import io
import json
import os
import re
import shutil
import subprocess
import textwrap

import numpy as np
import pytest
import scipy.ndimage as ndi

from conftest import CLI

PIL = pytest.importorskip("PIL.Image")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Hosts Chromium itself calls (component updater, clock): not the page's.
BROWSER_HOSTS = re.compile(r"^https?://([a-z0-9.-]+\.)?(google\.com|googleapis\.com|gvt1\.com)/")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    rng = np.random.default_rng(3)
    img = ndi.gaussian_filter(rng.random((20, 64, 64)), 2).astype(np.float32)
    np.save(d / "img.npy", img)
    np.save(d / "seeds.npy", img > np.quantile(img, 0.8))
    (d / "recipe.toml").write_text(textwrap.dedent("""\
        [pipeline]
        title = "Report <test> & co"
        [inputs]
        img = "img.npy"
        seeds = "seeds.npy"
        [[step]]
        name = "mask"
        op = "dilate"
        input = "seeds"
        connectivity = 1
        [[step]]
        name = "objects"
        op = "measure"
        labels = "labels"
        intensity = "img"
        [[step]]
        name = "labels"
        op = "label"
        input = "opened"
        [[step]]
        name = "opened"
        op = "open"
        input = "mask"
        ball = 1.5
        [[step]]
        name = "overview"
        op = "preview"
        image = "img"
        labels = "labels"
        """))
    r = subprocess.run([CLI, "pipeline", str(d / "recipe.toml")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return d / "out" / "report.html"


def test_report_is_self_contained(report):
    html = report.read_text()
    assert not re.search(r"https?:", html)
    assert not re.search(r"<script|<link|@import|@font-face|<iframe|<object|<embed", html, re.I)
    srcs = re.findall(r'src="([^"]*)"', html)
    urls = re.findall(r'url\(([^)]*)\)', html)
    assert not urls
    assert len(srcs) >= 7  # before/after of 3 op steps, the preview step
    for s in srcs:
        assert s.startswith("data:image/png;base64,")
        im = PIL.open(io.BytesIO(base64.b64decode(s.split(",", 1)[1])))
        im.load()
        assert im.size[0] > 10 and im.size[1] > 10
    assert "Report &lt;test&gt; &amp; co" in html  # recipe text is escaped
    assert "<svg" in html and "<rect" in html  # the volume histogram
    n = json.loads((report.parent / "run.json").read_text())["steps"]
    count = [s["count"] for s in n if s["name"] == "objects"][0]
    assert f"<b>{count} objects</b>" in html
    for step in ("mask", "opened", "labels", "objects", "overview"):
        assert f"<td>{step}</td>" in html


def screenshot(page, out, netlog):
    """Headless Chromium, offline (a new network namespace where that is
    allowed: root in CI), its network log kept."""
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-extensions", "--disable-default-apps", f"--log-net-log={netlog}",
            f"--screenshot={out}", "--window-size=1000,1400", f"file://{page}"]
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"]).returncode == 0:
        args = ["unshare", "-n"] + args
    else:
        args.insert(1, "--proxy-server=127.0.0.1:9")
    env = dict(os.environ, HOME=str(out.parent))  # chromium writes its profile there
    r = subprocess.run(args, capture_output=True, text=True, timeout=180, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    log = json.loads(netlog.read_text()) if netlog.exists() else {"events": []}
    urls = set()
    for e in log.get("events", []):
        u = (e.get("params") or {}).get("url")
        if isinstance(u, str):
            urls.add(u)
    return [u for u in urls if not u.startswith(("file:", "data:")) and not BROWSER_HOSTS.match(u)]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (tools/setup-deps.sh)")
def test_report_renders_offline_in_chromium(report, tmp_path):
    shot, netlog = tmp_path / "shot.png", tmp_path / "net.json"
    requests = screenshot(report, shot, netlog)
    assert requests == []
    im = np.asarray(PIL.open(shot).convert("RGB"))
    assert im.shape[0] >= 1000 and im.shape[1] >= 900
    assert im.std() > 20  # not blank
    colours = np.unique(im.reshape(-1, 3)[::7], axis=0)
    assert len(colours) > 50  # text, previews in colour, bars
    # The check sees a page that does reach out.
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><img src="http://voxa-report-test.invalid/x.png"></body></html>')
    requests = screenshot(bad, tmp_path / "bad.png", tmp_path / "bad.json")
    assert any("voxa-report-test.invalid" in u for u in requests)
