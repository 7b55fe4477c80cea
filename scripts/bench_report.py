#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scripts/bench_report.py [--no-plots] OUT: the summary and results page of a `make bench`
run whose result files are in OUT (build/bench-results).

Writes, in OUT:
  summary.csv   one row per result (the columns of ROW below)
  summary.txt   the headline ratios, then every row, as plain text
  index.html    the page: headline, plots, every row by section, the machine
  report-*.png  the plots (gnuplot; left out, with a note, without it)

Every ratio has one direction: the speed of the subject (the lock or
runtime under test) over the speed of the other, so > 1 means the subject
is faster: ops/s over ops/s, or the other's ns over the subject's ns. Its
spread [lo-hi] is the min-max of the ratios of paired (interleaved) runs
where the runs are paired; where only each side's min and max are known,
the widest ratio they allow; none where only medians are kept.

Sections read the result files each step of scripts/bench.sh writes; a
missing file leaves its section out. Extension: any OUT/*.summary.csv with
the ROW columns adds its rows (a new benchmark mode needs nothing here).
"""
import csv
import glob
import html
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

ROW = ["section", "measure", "threads", "subject", "vs", "ratio", "lo", "hi", "value", "unit"]
SUBJECT = "rqspinlock"
PEERS = ["ql", "pthread-spin", "pthread-mutex"]
# One colour and marker per series, the subject first (drawn thicker).
COLOURS = ["#000000", "#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00", "#a65628",
           "#f781bf", "#999999", "#66c2a5", "#8da0cb", "#e6ab02", "#1b9e77", "#d95f02"]


def row(section, measure, threads, subject, vs, ratio, lo, hi, value, unit):
    return dict(zip(ROW, [section, measure, threads, subject, vs, ratio, lo, hi, value, unit]))


def read_csv(out, name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return list(csv.DictReader(f))


def reps(r):
    """The per-repetition values of a CSV row (rep1, rep2 ...), in order."""
    keys = sorted((k for k in r if k and re.fullmatch(r"rep\d+", k)), key=lambda k: int(k[3:]))
    return [float(r[k]) for k in keys if r[k] not in ("", None)]


def paired(a, b, faster_is_higher):
    """Median, min, max of the paired ratios subject a / other b (speed)."""
    rs = [(x / y if faster_is_higher else y / x) for x, y in zip(a, b) if x > 0 and y > 0]
    if not rs:
        return None, None, None
    return statistics.median(rs), min(rs), max(rs)


def uncontended(out):
    rows = read_csv(out, "uncontended.csv") or []
    by = {r["lock"]: r for r in rows}
    res = []
    for subj in (SUBJECT, "rqspinlock-inline"):
        if subj not in by:
            continue
        s = by[subj]
        for vs in PEERS:
            if vs not in by:
                continue
            o = by[vs]
            res.append(row("uncontended", "lock+unlock pair", 1, subj, vs,
                           float(o["median_ns"]) / float(s["median_ns"]),
                           float(o["min_ns"]) / float(s["max_ns"]),
                           float(o["max_ns"]) / float(s["min_ns"]), s["median_ns"], "ns"))
    return res


def hammer(out):
    rows = read_csv(out, "hammer.csv") or []
    by = {r["lock"]: r for r in rows}
    res = []
    if SUBJECT not in by:
        return res
    s = by[SUBJECT]
    for vs in PEERS:
        if vs in by:
            m, lo, hi = paired(reps(s), reps(by[vs]), False)
            res.append(row("hammer", "two-thread hammer", s["threads"], SUBJECT, vs, m, lo, hi,
                           s["median_ns"], "ns/acquisition"))
    return res


def sweep(out):
    rows = read_csv(out, "sweep.csv") or []
    cells = {(r["threads"], r["lock"]): r for r in rows}
    res = []
    for t in sorted({int(r["threads"]) for r in rows}):
        s = cells.get((str(t), SUBJECT))
        if not s:
            continue
        for vs in PEERS:
            o = cells.get((str(t), vs))
            if o:
                m, lo, hi = paired(reps(s), reps(o), True)
                res.append(row("sweep", "throughput", t, SUBJECT, vs, m, lo, hi,
                               "%.2f" % (float(s["median_ops_per_s"]) / 1e6), "M acq/s"))
    return res


def dropin(out):
    rows = read_csv(out, "dropin-raw.csv") or []
    v = {}
    for r in rows:
        v.setdefault((r["mode"], int(r["threads"])), {})[r["rep"]] = float(r["value"])
    res = []
    for t in sorted({t for (_, t) in v}):
        g, p = v.get(("glibc", t), {}), v.get(("preload", t), {})
        keys = sorted(set(g) & set(p))
        if not keys:
            continue
        a, b = [p[k] for k in keys], [g[k] for k in keys]
        m, lo, hi = paired(a, b, t != 0)
        med = statistics.median(a)
        res.append(row("dropin", "uncontended pair" if t == 0 else "throughput", max(t, 1),
                       "drop-in", "glibc", m, lo, hi,
                       "%.2f" % (med if t == 0 else med / 1e6), "ns" if t == 0 else "M acq/s"))
    return res


def maps(out):
    rows = read_csv(out, "maps.csv") or []
    res = []
    for r in rows:
        s = float(r["rq_bucket"])
        for vs, col in (("pthread-spin buckets", "pthread_bucket"), ("one global lock", "global_lock")):
            o = float(r[col])
            res.append(row("maps", r["mix"], r["threads"], "rqmaps", vs,
                           s / o if o > 0 else None, None, None, "%.2f" % (s / 1e6), "M ops/s"))
    return res


def bpf_runs(out):
    """bpf-raw.csv: {(variant, threads): {rep: runs/s}}, or None."""
    rows = read_csv(out, "bpf-raw.csv")
    if rows is None:
        return None
    v = {}
    for r in rows:
        v.setdefault((r["variant"], int(r["threads"])), {})[r["rep"]] = float(r["runs_per_s"])
    return v


def bpf(out):
    """rqbpf's runs/s over plain C's and the kernel's, per thread count:
    paired by repetition from bpf-raw.csv (with spreads), else the medians
    of bpf.txt's table (threads, runs/s of rqbpf, C and the kernel; 0: not
    run)."""
    runs = bpf_runs(out)
    if runs is not None:
        res = []
        for t in sorted({t for (_, t) in runs}):
            rq = runs.get(("rqbpf", t), {})
            for vs, name in (("plain C", "C"), ("kernel BPF", "kernel")):
                o = runs.get((name, t), {})
                keys = sorted(set(rq) & set(o))
                if not keys:
                    continue
                m, lo, hi = paired([rq[k] for k in keys], [o[k] for k in keys], True)
                res.append(row("bpf", "lock+increment+unlock program", t, "rqbpf", vs, m, lo, hi,
                               "%.2f" % (statistics.median(rq.values()) / 1e6), "M runs/s"))
        return res
    path = os.path.join(out, "bpf.txt")
    if not os.path.exists(path):
        return []
    res = []
    for line in open(path):
        f = line.split()
        if len(f) < 4 or not all(re.fullmatch(r"\d+", x) for x in f[:4]):
            continue
        t, rq, c, k = int(f[0]), float(f[1]), float(f[2]), float(f[3])
        for vs, o in (("plain C", c), ("kernel BPF", k)):
            if o > 0:
                res.append(row("bpf", "lock+increment+unlock program", t, "rqbpf", vs, rq / o,
                               None, None, "%.2f" % (rq / 1e6), "M runs/s"))
    return res


def recovery(out):
    res = []
    for path in sorted(glob.glob(os.path.join(out, "inject-*.json"))):
        try:
            runs = json.load(open(path))["runs"]
        except (ValueError, KeyError):
            continue
        for r in runs:
            lat = r.get("recovery_latency_ns", {})
            if "p50" in lat:
                res.append(row("recovery", "%s %s p50 / p99" % (r["inject"], r["via"]),
                               r.get("threads", ""), SUBJECT, "", None, None, None,
                               "%d / %d" % (lat["p50"], lat["p99"]), "ns"))
    return res


def extra(out):
    res = []
    for path in sorted(glob.glob(os.path.join(out, "*.summary.csv"))):
        for r in read_csv(out, os.path.basename(path)) or []:
            res.append({k: r.get(k, "") for k in ROW})
    return res


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def fmt_ratio(r):
    m, lo, hi = num(r["ratio"]), num(r["lo"]), num(r["hi"])
    if m is None:
        return "", ""
    return "%.2f" % m, ("[%.2f-%.2f]" % (lo, hi) if lo is not None and hi is not None else "")


def headline(rows):
    """Uncontended and hammer against each peer, the sweep at 1 thread and at
    its most threads, the drop-in uncontended and at its most threads, rqbpf
    against the kernel (as root) and plain C on one thread, and every row of an extension file."""
    def most(sec):
        ts = [int(r["threads"]) for r in rows if r["section"] == sec]
        return max(ts) if ts else None
    top_sweep, top_drop, one = most("sweep"), most("dropin"), "1"
    pick = []
    for r in rows:
        sec, t = r["section"], str(r["threads"])
        if (sec in ("uncontended", "hammer") and r["subject"] == SUBJECT) or \
           (sec == "sweep" and t in (one, str(top_sweep))) or \
           (sec == "dropin" and (r["measure"] == "uncontended pair" or t == str(top_drop))) or \
           (sec == "bpf" and t == one) or \
           sec not in ("uncontended", "hammer", "sweep", "dropin", "maps", "bpf", "recovery"):
            pick.append(r)
    return pick


HEADER = ("speed ratio = the subject's speed / the other's (> 1: the subject is faster); "
          "[lo-hi]: min-max over paired repetitions")


def text_table(rows):
    lines = ["%-12s %-32s %7s %-17s %-20s %6s %-13s %s" %
             ("section", "measure", "threads", "subject", "vs", "ratio", "[lo-hi]", "value")]
    for r in rows:
        m, spread = fmt_ratio(r)
        lines.append("%-12s %-32s %7s %-17s %-20s %6s %-13s %s %s" %
                     (r["section"], r["measure"][:32], r["threads"], r["subject"], r["vs"], m,
                      spread, r["value"], r["unit"]))
    return "\n".join(lines)


def machine(out):
    path = os.path.join(out, "machine.txt")
    return open(path).read().strip() if os.path.exists(path) else "(machine.txt missing)"


# ---- plots -----------------------------------------------------------------

def log_if_wide(values):
    """gnuplot's log scale only where the positive data span a factor >= 3."""
    vs = [v for v in values if v and v > 0]
    return bool(vs) and max(vs) / min(vs) >= 3


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True, timeout=60)


def lines_plot(png, title, xlabel, ylabel, series, ref=None):
    """series: [(name, [(x, y, lo, hi)])], the subject first; error bars
    where lo and hi are known."""
    xs = [p[0] for _, pts in series for p in pts]
    ys = [v for _, pts in series for p in pts for v in p[1:] if v is not None]
    out = ["set terminal pngcairo size 1000,560 font ',11'", "set output '%s'" % png,
           "set termoption noenhanced", "set title '%s'" % title, "set grid",
           "set key outside right", "set xlabel '%s'" % xlabel, "set ylabel '%s'" % ylabel,
           "set format y '%g'"]
    if log_if_wide(xs):
        out.append("set logscale x 2")
    if log_if_wide(ys):
        out.append("set logscale y 10")
    plots = []
    for i, (name, pts) in enumerate(series):
        pts = [p for p in pts if p[1] is not None and p[1] > 0]
        if not pts:
            continue
        out.append("$d%d << EOD" % i)
        out += ["%s %s %s %s" % (x, y, lo if lo is not None else y, hi if hi is not None else y)
                for x, y, lo, hi in pts]
        out.append("EOD")
        style = "lw %d lc rgb '%s' pt %d ps %s" % (4 if i == 0 else 2, COLOURS[i % len(COLOURS)],
                                                   (i % 13) + 1, "1.6" if i == 0 else "1.1")
        plots.append("$d%d using 1:2:3:4 with yerrorlines %s title '%s'" % (i, style, name))
    if ref is not None:
        plots.append("%s with lines dt 2 lc rgb 'gray' title 'ratio 1'" % ref)
    if not plots:
        return False
    out.append("plot " + ", \\\n     ".join(plots))
    gnuplot("\n".join(out) + "\n")
    return True


def bars_plot(png, title, ylabel, bars):
    """bars: [(label, y, lo, hi)], the subject first (drawn dark)."""
    bars = [b for b in bars if b[1] is not None]
    if not bars:
        return False
    ys = [v for b in bars for v in b[1:] if v is not None]
    out = ["set terminal pngcairo size 900,520 font ',11'", "set output '%s'" % png,
           "set termoption noenhanced", "set title '%s'" % title, "set grid ytics",
           "set ylabel '%s'" % ylabel, "set style fill solid 0.8 border -1", "set boxwidth 0.6",
           "set xtics rotate by -30", "set key off"]
    out.append("set logscale y 10" if log_if_wide(ys) else "set yrange [0:*]")
    out.append("$d << EOD")
    for i, (label, y, lo, hi) in enumerate(bars):
        out.append("%d \"%s\" %s %s %s %d" % (i, label, y, lo if lo is not None else y,
                                             hi if hi is not None else y,
                                             int(COLOURS[i % len(COLOURS)][1:], 16)))
    out += ["EOD", "plot $d using 1:3:4:5:(0.6):6:xtic(2) with boxerrorbars lc rgb variable"]
    gnuplot("\n".join(out) + "\n")
    return True


def plots(out, rows):
    """The page's plots, as (file, caption); none without gnuplot."""
    if not shutil.which("gnuplot"):
        return [], "gnuplot not found (Debian: gnuplot-nox): no plots; the tables are complete."
    made = []

    def add(name, caption, ok):
        if ok:
            made.append((name, caption))

    sw = read_csv(out, "sweep.csv") or []
    locks = []
    for r in sw:
        if r["lock"] not in locks:
            locks.append(r["lock"])
    if SUBJECT in locks:
        locks.remove(SUBJECT)
        locks.insert(0, SUBJECT)
    series = [(lk, [(int(r["threads"]), float(r["median_ops_per_s"]) / 1e6,
                     float(r["min_ops_per_s"]) / 1e6, float(r["max_ops_per_s"]) / 1e6)
                    for r in sw if r["lock"] == lk]) for lk in locks]
    add("report-throughput.png", "Throughput of every lock against threads: median, bars from "
        "the slowest to the fastest repetition.",
        lines_plot(os.path.join(out, "report-throughput.png"),
                   "Throughput vs threads (medians; bars: min-max of the repetitions)",
                   "threads", "million acquisitions per second", series))

    def ratio_series(sec, subject_filter=None):
        peers = []
        for r in rows:
            if r["section"] == sec and r["vs"] not in peers and \
                    (subject_filter is None or r["subject"] == subject_filter):
                peers.append(r["vs"])
        return [("%s / %s" % (subject_filter or "subject", vs),
                 [(int(r["threads"]), num(r["ratio"]), num(r["lo"]), num(r["hi"]))
                  for r in rows if r["section"] == sec and r["vs"] == vs and
                  r["measure"] != "uncontended pair" and
                  (subject_filter is None or r["subject"] == subject_filter)]) for vs in peers]

    add("report-sweep-ratio.png", "rqspinlock's throughput over each peer's, per thread count "
        "(paired repetitions; above 1: rqspinlock is faster).",
        lines_plot(os.path.join(out, "report-sweep-ratio.png"),
                   "rqspinlock throughput / peer throughput (> 1: rqspinlock faster)", "threads",
                   "speed ratio rqspinlock / peer", ratio_series("sweep", SUBJECT), ref=1))
    hm = read_csv(out, "hammer.csv") or []
    hm.sort(key=lambda r: r["lock"] != SUBJECT)
    add("report-hammer.png", "Two-thread hammer: ns per acquisition (lower is faster), bars "
        "from the fastest to the slowest repetition.",
        bars_plot(os.path.join(out, "report-hammer.png"),
                  "Two-thread hammer: ns per acquisition (median; lower is faster)",
                  "ns per acquisition", [(r["lock"], float(r["median_ns"]), float(r["min_ns"]),
                                          float(r["max_ns"])) for r in hm]))
    un = read_csv(out, "uncontended.csv") or []
    un = [r for r in un if not r["lock"].startswith("ql-")]  # the experiments: text only
    un.sort(key=lambda r: r["lock"] != SUBJECT)
    add("report-uncontended.png", "One thread's lock+unlock pair, ns (lower is faster).",
        bars_plot(os.path.join(out, "report-uncontended.png"),
                  "Uncontended lock+unlock pair: ns (median; lower is faster)", "ns per pair",
                  [(r["lock"], float(r["median_ns"]), float(r["min_ns"]), float(r["max_ns"]))
                   for r in un]))
    add("report-dropin.png", "The pthread drop-in's throughput over glibc's pthread_spin_lock "
        "(paired repetitions; above 1: the drop-in is faster).",
        lines_plot(os.path.join(out, "report-dropin.png"),
                   "pthread drop-in / glibc pthread_spin throughput (> 1: drop-in faster)",
                   "threads", "speed ratio drop-in / glibc", ratio_series("dropin", "drop-in"),
                   ref=1))
    runs = bpf_runs(out)
    if runs:
        names = [("rqbpf", "rqbpf"), ("plain C", "C"), ("kernel BPF", "kernel")]
        series = [(label, [(t, statistics.median(v.values()) / 1e6, min(v.values()) / 1e6,
                            max(v.values()) / 1e6)
                           for (n, t), v in sorted(runs.items(), key=lambda kv: kv[0][1])
                           if n == name and v])
                  for label, name in names]
        add("report-bpf.png", "The BPF program's runs per second: rqbpf, the same in plain C, "
            "and the kernel's BPF_PROG_TEST_RUN (root only): medians, bars from the slowest to "
            "the fastest repetition.",
            lines_plot(os.path.join(out, "report-bpf.png"),
                       "BPF lock+increment+unlock program: runs/s (medians; bars: min-max)",
                       "threads", "million runs per second", series))
        add("report-bpf-ratio.png", "rqbpf's runs per second over plain C's and the kernel's, "
            "per thread count (paired repetitions; above 1: rqbpf is faster).",
            lines_plot(os.path.join(out, "report-bpf-ratio.png"),
                       "rqbpf runs/s / other runs/s (> 1: rqbpf faster)", "threads",
                       "speed ratio rqbpf / other", ratio_series("bpf", "rqbpf"), ref=1))
    bp = [r for r in rows if r["section"] == "bpf"]
    if bp and runs is None:
        ts = sorted({int(r["threads"]) for r in bp})
        rq = {int(r["threads"]): num(r["value"]) for r in bp}
        series = [("rqbpf", [(t, rq[t], None, None) for t in ts])]
        for vs in ("plain C", "kernel BPF"):
            series.append((vs, [(int(r["threads"]), rq[int(r["threads"])] / num(r["ratio"]), None,
                                 None) for r in bp if r["vs"] == vs]))
        add("report-bpf.png", "The BPF program's runs per second: rqbpf, the same in plain C, "
            "and the kernel's BPF_PROG_TEST_RUN (root only), medians.",
            lines_plot(os.path.join(out, "report-bpf.png"),
                       "BPF lock+increment+unlock program: runs/s (medians)", "threads",
                       "million runs per second", series))
    mp = read_csv(out, "maps.csv") or []
    for mix in sorted({r["mix"] for r in mp}):
        series = [(name, [(int(r["threads"]), float(r[col]) / 1e6, None, None)
                          for r in mp if r["mix"] == mix])
                  for name, col in (("rqmaps (rqspinlock buckets)", "rq_bucket"),
                                    ("pthread-spin buckets", "pthread_bucket"),
                                    ("one global lock", "global_lock"))]
        add("report-maps-%s.png" % mix, "rqmaps hash map, %s mix: operations per second "
            "(medians) of three bucket-lock designs." % mix,
            lines_plot(os.path.join(out, "report-maps-%s.png" % mix),
                       "rqmaps hash map, %s: ops/s (medians)" % mix, "threads",
                       "million operations per second", series))
    return made, None


# ---- outputs ---------------------------------------------------------------

def html_table(rows):
    h = ["<table><thead><tr>" + "".join("<th>%s</th>" % c for c in
         ("section", "measure", "threads", "subject", "vs", "ratio", "[lo-hi]", "value"))
         + "</tr></thead><tbody>"]
    for r in rows:
        m, spread = fmt_ratio(r)
        cls = ""
        if num(r["ratio"]) is not None:
            cls = ' class="%s"' % ("faster" if num(r["ratio"]) >= 1 else "slower")
        h.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
                 "<td%s>%s</td><td>%s</td><td>%s %s</td></tr>" %
                 tuple(html.escape(str(x)) if i != 5 else x for i, x in enumerate(
                     (r["section"], r["measure"], r["threads"], r["subject"], r["vs"], cls, m,
                      spread, r["value"], r["unit"]))))
    h.append("</tbody></table>")
    return "\n".join(h)


STYLE = """body { font-family: sans-serif; max-width: 1100px; margin: 1em auto; color: #222 }
table { border-collapse: collapse; margin: 0.5em 0 1.5em } th, td { padding: 2px 8px;
border-bottom: 1px solid #ddd; text-align: left } td.faster { color: #1a7f37 }
td.slower { color: #b42318 } figure { margin: 1em 0 } img { max-width: 100%; border: 1px solid #eee }
figcaption { font-size: 90%; color: #555 } pre { background: #f6f8fa; padding: 0.5em }"""

# Set on load, for the suite's headless-browser check: how many images decoded.
CHECK = """<script>
window.addEventListener("load", function () {
  var imgs = document.images, ok = 0;
  for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
  document.body.setAttribute("data-images-loaded", ok + "/" + imgs.length);
});
</script>"""


def write_html(out, rows, head, figs, note):
    sections = []
    for r in rows:
        if r["section"] not in sections:
            sections.append(r["section"])
    raw = sorted(os.path.basename(p) for p in glob.glob(os.path.join(out, "*.txt")))
    body = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
            "<title>rqspinlock benchmark results</title><style>%s</style>" % STYLE, CHECK,
            "</head><body>", "<h1>rqspinlock benchmark results</h1>",
            "<h2 id=\"summary\">Summary</h2>", "<p>%s.</p>" % html.escape(HEADER),
            html_table(head), "<h2 id=\"plots\">Plots</h2>"]
    if note:
        body.append("<p>%s</p>" % html.escape(note))
    for name, caption in figs:
        body.append("<figure><img src=\"%s\" alt=\"%s\"><figcaption>%s</figcaption></figure>" %
                    (name, html.escape(caption), html.escape(caption)))
    body.append("<h2 id=\"results\">Every result</h2>")
    for sec in sections:
        body.append("<h3 id=\"%s\">%s</h3>" % (html.escape(sec), html.escape(sec)))
        body.append(html_table([r for r in rows if r["section"] == sec]))
    body.append("<h2 id=\"machine\">Machine</h2><pre>%s</pre>" % html.escape(machine(out)))
    body.append("<h2 id=\"raw\">Full reports</h2><ul>%s</ul>" %
                "".join("<li><a href=\"%s\">%s</a></li>" % (html.escape(n), html.escape(n))
                        for n in raw))
    body.append("</body></html>")
    with open(os.path.join(out, "index.html"), "w") as f:
        f.write("\n".join(body) + "\n")


def main():
    args = sys.argv[1:]
    draw = "--no-plots" not in args
    args = [a for a in args if a != "--no-plots"]
    if len(args) != 1 or not os.path.isdir(args[0]):
        sys.exit("usage: bench_report.py [--no-plots] RESULTS_DIR")
    out = args[0]
    rows = []
    for section in (uncontended, hammer, sweep, dropin, maps, bpf, recovery):
        rows += section(out)
    rows += extra(out)
    if not rows:
        sys.exit("bench_report: no results in %s" % out)
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=ROW)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("%.4f" % r[k] if isinstance(r[k], float) else r[k]) for k in ROW})
    head = headline(rows)
    first = machine(out).splitlines()
    text = ["rqspinlock benchmark summary (%s)" % (first[0] if first else ""),
            HEADER, "", "Headline", text_table(head), "", "Every result", text_table(rows), ""]
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(text))
    figs, note = plots(out, rows) if draw else ([], "plots not drawn (--no-plots)")
    write_html(out, rows, head, figs, note)
    print("\n".join(text[:5]))
    print("\nbench: every result in %s/summary.txt, the page with %d plots in %s/index.html" %
          (out, len(figs), out))


if __name__ == "__main__":
    main()
