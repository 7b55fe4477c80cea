#!/usr/bin/env bash
# check_report.sh SOURCE_DIR structure|browser: the results page that
# scripts/bench_report.py makes, from the published run in docs/bench-results/
# (copied to a temporary directory).
#   structure  summary.txt starts with the headline and has one row per
#              result of each section; summary.csv has the same rows;
#              index.html is well formed, has its sections, and every image
#              it shows is a PNG that exists (plots: where gnuplot is
#              installed).
#   browser    headless Chromium (Debian: chromium-headless-shell, or
#              chromium) loads the page: every image decodes, and a
#              screenshot is taken (kept in $RQ_REPORT_SHOTS when set).
#              Exit 77 (skipped) without a Chromium.
# Bounded: each browser run under timeout(1).
set -euo pipefail
src=$1 what=$2
fail() {
	echo "bench report: $*" >&2
	exit 1
}
browser=
for b in chromium-headless-shell chromium; do
	if command -v "$b" >/dev/null; then
		browser=$(command -v "$b")
		break
	fi
done
if [ "$what" = browser ] && [ -z "$browser" ]; then
	echo "bench report: no chromium-headless-shell or chromium: the page's rendering is not checked"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/results
cp -r "$src/docs/bench-results" "$out"
rm -f "$out"/index.html "$out"/summary.* "$out"/report-*.png
python3 "$src/scripts/bench_report.py" "$out" >"$tmp/stdout"

if [ "$what" = structure ]; then
	head -1 "$out/summary.txt" | grep -q '^rqspinlock benchmark summary' || fail "summary.txt: no title"
	sed -n 4p "$out/summary.txt" | grep -qx 'Headline' || fail "summary.txt: the headline is not first"
	grep -q '^Headline$' "$tmp/stdout" || fail "make bench's output has no headline"
	# One row per result: the sweep has one per thread count and peer.
	want=$(awk -F, 'NR > 1 && $2 == "rqspinlock" { n++ } END { print n * 3 }' "$out/sweep.csv")
	got=$(awk -F, '$1 == "sweep"' "$out/summary.csv" | wc -l)
	[ "$got" -eq "$want" ] || fail "summary.csv: $got sweep rows, $want results"
	for sec in uncontended hammer sweep dropin maps bpf recovery; do
		grep -q "^$sec " "$out/summary.txt" || fail "summary.txt: no $sec rows"
	done
	# An extension's rows (OUT/*.summary.csv) join the summary and the page.
	printf 'section,measure,threads,subject,vs,ratio,lo,hi,value,unit\nnewmode,probe,2,rqspinlock,ql,1.5,1.4,1.6,9,ns\n' \
		>"$out/newmode.summary.csv"
	cp "$out/index.html" "$tmp/index.html"
	python3 "$src/scripts/bench_report.py" --no-plots "$out" >/dev/null
	grep -q '^newmode .*1\.50 \[1\.40-1\.60\]' "$out/summary.txt" || fail "an extension's row is not in summary.txt"
	grep -q 'id="newmode"' "$out/index.html" || fail "an extension's section is not on the page"
	cp "$tmp/index.html" "$out/index.html"
	python3 - "$out" <<'PY' || fail "index.html: see above"
import html.parser, os, sys
out = sys.argv[1]
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.imgs, self.ids, self.rows, self.errors = [], [], set(), 0, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a.get("src"))
        elif tag not in ("meta", "br", "hr"):
            self.stack.append(tag)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "tr":
            self.rows += 1
    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.errors.append("unbalanced </%s>" % tag)
p = Page()
p.feed(open(os.path.join(out, "index.html")).read())
errs = p.errors + ["unclosed <%s>" % t for t in p.stack]
for need in ("summary", "plots", "results", "machine", "sweep", "dropin", "bpf"):
    if need not in p.ids:
        errs.append("no section #" + need)
for src in p.imgs:
    path = os.path.join(out, src)
    if not os.path.exists(path) or open(path, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
        errs.append("image %s: not a PNG file" % src)
if p.rows < 50:
    errs.append("only %d table rows" % p.rows)
print("bench report: index.html: %d images, %d table rows" % (len(p.imgs), p.rows))
for e in errs:
    print("bench report: index.html: " + e, file=sys.stderr)
sys.exit(1 if errs else 0)
PY
	echo "bench report: structure OK"
	exit 0
fi

# browser: the DOM after load says how many images decoded.
imgs=$(grep -o '<img ' "$out/index.html" | wc -l)
[ "$imgs" -gt 0 ] || fail "the page has no plots (is gnuplot installed?)"
run_browser() {
	timeout 90 "$browser" --headless --no-sandbox --disable-gpu --allow-file-access-from-files \
		--virtual-time-budget=5000 "$@" "file://$out/index.html" 2>"$tmp/browser.err"
}
run_browser --dump-dom >"$tmp/dom.html" || {
	cat "$tmp/browser.err" >&2
	fail "$browser could not load the page"
}
loaded=$(sed -n 's/.*data-images-loaded="\([0-9]*\/[0-9]*\)".*/\1/p' "$tmp/dom.html" | head -1)
[ "$loaded" = "$imgs/$imgs" ] || fail "images decoded in $browser: '${loaded:-none}', want $imgs/$imgs"
run_browser --window-size=1200,3000 --screenshot="$tmp/page.png" >/dev/null || fail "no screenshot"
[ -s "$tmp/page.png" ] || fail "empty screenshot"
if [ -n "${RQ_REPORT_SHOTS:-}" ]; then
	mkdir -p "$RQ_REPORT_SHOTS"
	cp "$tmp/page.png" "$RQ_REPORT_SHOTS/index.png"
fi
echo "bench report: $(basename "$browser") loaded the page, $loaded images decoded, screenshot taken"
