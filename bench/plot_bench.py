#!/usr/bin/env python3
"""Draw `ctensor bench --json` results: per device, a horizontal bar per op of
the fraction of the device's measured limit it reaches (memory-bound rows
against the STREAM bandwidth, compute-bound rows against the float32 peak),
coloured by category, with a line at 100 %.

    python3 plot_bench.py bench.json bench.png

`ctensor bench --plot FILE.png` runs this. Needs matplotlib (Agg backend, no
display); exit status 3 with install instructions when it is missing.
"""
import json
import sys

COLOURS = {"elementwise": "#4C72B0", "broadcast_reduce": "#DD8452", "nn": "#55A868"}


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
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, sum(heights)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (d, drows) in zip(axes[:, 0], panels):
        labels, values, colours = [], [], []
        for r in drows:
            frac = r.get("fraction")
            status = r.get("status", "")
            label = "%s (%s)" % (r["op"], r["dtype"])
            if status != "ok":
                label += "  [%s]" % status.split(":")[0]
            labels.append(label)
            values.append(100.0 * frac if isinstance(frac, (int, float)) else 0.0)
            colours.append(COLOURS.get(r.get("category"), "#8C8C8C"))
        y = list(range(len(labels)))
        # Rows far above 100 % (data in cache, an early exit) would squash the
        # rest: the axis stops at 300 % and their labels carry the figure.
        xmax = min(max(values + [100.0]) * 1.08, 300.0)
        shown = [min(v, xmax) for v in values]
        hatches = ["//" if r.get("bound") == "compute" else "" for r in drows]
        for yi, v, c, h in zip(y, shown, colours, hatches):
            ax.barh(yi, v, color=c, height=0.75, hatch=h, edgecolor="white" if h else c, linewidth=0)
        for yi, v, s, r in zip(y, values, shown, drows):
            if r.get("status") == "ok":
                ax.text(s, yi, (" %.0f%%" if v <= xmax else " %.0f%% >") % v, va="center", fontsize=6,
                        ha="left" if v <= xmax else "right")
        ax.set_xlim(0, xmax * 1.06)
        ax.axvline(100.0, color="black", linewidth=1, linestyle="--")
        ax.set_yticks(y)
        ax.set_yticklabels(labels, fontsize=6)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        ax.set_xlabel("% of the device limit (memory-bound: STREAM bandwidth; compute-bound: float32 peak)")
        lim = d.get("limits", {})
        bw, peak = lim.get("bandwidth_Bps"), lim.get("peak_flops")
        limits = ("memory %.1f GB/s, compute %.0f GFLOP/s" % (bw / 1e9, peak / 1e9)
                  if isinstance(bw, (int, float)) and isinstance(peak, (int, float)) else "limits not measured")
        ax.set_title("%s  %s\n%s  (ctensor %s%s)" % (d.get("label", ""), d.get("name", ""), limits,
                                                   res.get("version", "?"), ", --quick" if res.get("quick") else ""),
                     fontsize=9)
        present = [c for c in COLOURS if any(r.get("category") == c for r in drows)]
        handles = [Patch(color=COLOURS[c], label=c) for c in present]
        if any(r.get("bound") == "compute" for r in drows):
            handles.append(Patch(facecolor="#BBBBBB", hatch="//", edgecolor="white", label="compute-bound"))
        ax.legend(handles=handles, loc="lower right", fontsize=7)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
