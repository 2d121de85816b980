#!/usr/bin/env python3
"""Draw `ctensor bench --json` results: per device, a horizontal bar per op of
the fraction of the device's limit it reaches (memory-bound rows against the
best streaming bandwidth, compute-bound rows against the float32 FMA peak,
both measured in the run), coloured by category, with a line at 100 %.

A row above 100 % of its limit is never drawn as a bar past the line: its bar
stops at 100 %, crossed out in red, and its label carries the figure and the
reason the tool gave ("limit under-measured", or "working set fits in cache:
N MiB < L3 M MiB"). A memory-bound row whose working set fits in the L3 says so
under 100 % too.

    python3 plot_bench.py bench.json bench.png

`ctensor bench --plot FILE.png` runs this. Needs matplotlib (Agg backend, no
display); exit status 3 with install instructions when it is missing.
"""
import json
import sys

COLOURS = {"elementwise": "#4C72B0", "broadcast_reduce": "#DD8452", "nn": "#55A868"}
OVER = "#C44E52"  # rows over their limit


def row_display(r):
    """How one row is drawn: {"value": bar length in % (never past 100),
    "over": the row is above its limit, "text": the label after the bar}."""
    frac = r.get("fraction")
    pct = 100.0 * frac if isinstance(frac, (int, float)) else None
    flag = r.get("flag")
    if r.get("status") != "ok" or pct is None:
        return {"value": 0.0, "over": False, "text": ""}
    if pct > 100.0:
        return {"value": 100.0, "over": True,
                "text": " %.0f%% ! %s" % (pct, flag or "above the limit")}
    return {"value": pct, "over": False, "text": " %.0f%%" % pct + ("  (%s)" % flag if flag else "")}


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: plot_bench.py BENCH.json OUT.png\n")
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        sys.stderr.write("plot_bench.py: matplotlib is not installed for %s; install it with\n"
                         "    %s -m pip install matplotlib\n"
                         "or your system's package (Debian/Ubuntu: apt-get install python3-matplotlib)\n"
                         % (sys.executable, sys.executable))
        return 3
    with open(argv[1]) as f:
        res = json.load(f)
    devices = res.get("devices", [])
    rows = res.get("rows", [])
    panels = []
    for d in devices:
        drows = [r for r in rows if r.get("device") == d.get("label")]
        if drows:
            panels.append((d, drows))
    if not panels:
        sys.stderr.write("plot_bench.py: no rows in %s\n" % argv[1])
        return 1
    heights = [max(2.0, 0.18 * len(r) + 1.2) for _, r in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, sum(heights)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (d, drows) in zip(axes[:, 0], panels):
        labels, shown = [], []
        for r in drows:
            label = "%s (%s)" % (r["op"], r["dtype"])
            status = r.get("status", "")
            if status != "ok":
                label += "  [%s]" % status.split(":")[0]
            labels.append(label)
            shown.append(row_display(r))
        y = list(range(len(labels)))
        for yi, r, s in zip(y, drows, shown):
            colour = COLOURS.get(r.get("category"), "#8C8C8C")
            if s["over"]:
                # Not a plain bar past the line: up to it, crossed out, with the reason.
                ax.barh(yi, s["value"], color="white", height=0.75, hatch="xxx", edgecolor=OVER, linewidth=0.8)
            else:
                hatch = "//" if r.get("bound") == "compute" else ""
                ax.barh(yi, s["value"], color=colour, height=0.75, hatch=hatch,
                        edgecolor="white" if hatch else colour, linewidth=0)
            if s["text"]:
                ax.text(s["value"], yi, s["text"], va="center", fontsize=6, color=OVER if s["over"] else "black")
        # Room after the 100 % line for the labels; ticks only up to it.
        ax.set_xlim(0, 190)
        ax.set_xticks([0, 20, 40, 60, 80, 100])
        ax.axvline(100.0, color="black", linewidth=1, linestyle="--")
        ax.set_yticks(y)
        ax.set_yticklabels(labels, fontsize=6)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        ax.set_xlabel("% of the device limit (memory-bound: the best streaming bandwidth; "
                      "compute-bound: the float32 FMA peak)")
        lim = d.get("limits", {})
        bw, peak = lim.get("bandwidth_Bps"), lim.get("peak_flops")
        if isinstance(bw, (int, float)) and isinstance(peak, (int, float)):
            limits = ("limits (the best of this run's probes and the cached floor): memory %.1f GB/s, "
                      "compute %.0f GFLOP/s" % (bw / 1e9, peak / 1e9))
        else:
            limits = "limits not measured"
        if isinstance(lim.get("scale"), (int, float)) and lim["scale"] != 1:
            limits += " (scaled by %g)" % lim["scale"]
        l3 = res.get("l3_bytes")
        if isinstance(l3, int) and l3 > 0:
            limits += ", L3 %.0f MiB" % (l3 / 1048576)
        ax.set_title("%s  %s  (ctensor %s%s)\n%s" % (d.get("label", ""), d.get("name", ""), res.get("version", "?"),
                                                   ", --quick" if res.get("quick") else "", limits),
                     fontsize=9)
        present = [c for c in COLOURS if any(r.get("category") == c for r in drows)]
        handles = [Patch(color=COLOURS[c], label=c) for c in present]
        if any(r.get("bound") == "compute" for r in drows):
            handles.append(Patch(facecolor="#BBBBBB", hatch="//", edgecolor="white", label="compute-bound"))
        if any(s["over"] for s in shown):
            handles.append(Patch(facecolor="white", hatch="xxx", edgecolor=OVER,
                                 label="above its limit (reason given)"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
