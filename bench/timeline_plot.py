#!/usr/bin/env python3
"""Draws a pipevd stage timeline (PIPEVD_VERBOSE=2's JSON) as a PNG like the pipelined paper's
Figure 8: one row per engine rank (labelled with its GPU), a coloured bar per stage, the
intervals of other threads (the D&C, the release, the A buffer's population, SBR-back's queueing)
as thinner bars under its rank's row, so the overlap of the stages can be seen.

  python3 bench/timeline_plot.py pipevd-timeline-123.json -o timeline.png [--title TEXT]

The JSON is checked first (every interval has rank, stage, start <= end); a malformed file is an
error. --skip-code N: exit with N (instead of failing) where matplotlib is not installed.
"""
import argparse
import json
import sys

STAGE_COLORS = {
    "entry": "#636363",
    "plan": "#dadaeb",
    "plan_wave_rows": "#bcbddc",
    "plan_device_memory": "#9e9ac8",
    "plan_device_kernels": "#807dba",
    "plan_call": "#6a51a3",
    "plan_redistribution": "#efedf5",
    "plan_host_memory": "#54278f",
    "device_context": "#9ecae1",
    "nccl_setup": "#fdae6b",
    "device_pool": "#c7e9c0",
    "device_pool_rest": "#74c476",
    "redistribute_in": "#9e9e9e",
    "a_populate": "#d9d9d9",
    "engine_setup": "#17becf",
    "failure_agreement": "#fdd0a2",
    "engine_bind": "#aec7e8",
    "dbbr": "#1f77b4",
    "bulge_chasing": "#ff7f0e",
    "sbr_back_start": "#98df8a",
    "sbr_back_queue": "#c7e9c0",
    "sbr_back": "#2ca02c",
    "bc_back": "#d62728",
    "dc": "#9467bd",
    "dc_wait": "#f7f7f7",
    "qd_broadcast": "#e377c2",
    "qpre_broadcast": "#f7b6d2",
    "pre_gemm": "#c49c94",
    "m_broadcast": "#e377c2",
    "gemm": "#8c564b",
    "z_to_host": "#bcbd22",
    "w_broadcast": "#fee6ce",
    "engine_release": "#7f7f7f",
    "redistribute_out": "#bdbdbd",
}


def load(path):
    with open(path) as f:
        doc = json.load(f)
    intervals = doc.get("intervals")
    if not isinstance(intervals, list) or not intervals:
        raise ValueError(f"{path}: no intervals")
    for i in intervals:
        for key in ("rank", "stage", "thread", "start", "end"):
            if key not in i:
                raise ValueError(f"{path}: interval without {key}: {i}")
        if i["start"] > i["end"]:
            raise ValueError(f"{path}: interval ends before it starts: {i}")
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("-o", "--output", default=None, help="PNG path (default: the JSON's with .png)")
    ap.add_argument("--title", default=None)
    ap.add_argument("--skip-code", type=int, default=None)
    args = ap.parse_args()
    doc = load(args.json)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        print("matplotlib is not installed; no plot", file=sys.stderr)
        return args.skip_code if args.skip_code is not None else 1

    intervals = doc["intervals"]
    ranks = sorted({i["rank"] for i in intervals})
    gpu_of = {i["rank"]: i.get("gpu", -1) for i in intervals}
    total = max(i["end"] for i in intervals)
    fig, ax = plt.subplots(figsize=(11, 1.0 + 0.75 * len(ranks)))
    stages_seen = []
    for row, r in enumerate(ranks):
        y = len(ranks) - 1 - row  # rank 0 on top
        for i in (i for i in intervals if i["rank"] == r):
            color = STAGE_COLORS.get(i["stage"], "#17becf")
            main = i["thread"] == "main"
            height, base = (0.5, y - 0.05) if main else (0.22, y - 0.38)
            ax.broken_barh([(i["start"], i["end"] - i["start"])], (base, height), facecolors=color,
                           edgecolor="black", linewidth=0.3)
            if i["stage"] not in stages_seen:
                stages_seen.append(i["stage"])
    labels = []
    for r in reversed(ranks):
        g = gpu_of[r]
        labels.append(f"rank {r}" + (f" (GPU {g})" if g is not None and g >= 0 else ""))
    ax.set_yticks(range(len(ranks)))
    ax.set_yticklabels(labels)
    ax.set_ylim(-0.6, len(ranks) - 0.3)
    first = min([0.0] + [i["start"] for i in intervals])  # a call's entry lies before the origin
    ax.set_xlim(first, total * 1.01)
    ax.set_xlabel("seconds from the common origin (threads other than main: thin bar below its rank)")
    title = args.title or f"pipevd {doc.get('backend', '')} engine, n = {doc.get('n', '?')}, " \
                          f"{len(ranks)} ranks, {total:.3f} s"
    ax.set_title(title)
    ax.legend(handles=[Patch(facecolor=STAGE_COLORS.get(s, "#17becf"), label=s)
                       for s in stages_seen],
              loc="upper center", bbox_to_anchor=(0.5, -0.35 if len(ranks) < 3 else -0.2),
              ncol=min(8, len(stages_seen)), fontsize=8, frameon=False)
    fig.tight_layout()
    out = args.output or (args.json.rsplit(".", 1)[0] + ".png")
    fig.savefig(out, dpi=130, bbox_inches="tight")
    print(f"wrote {out}: {len(ranks)} ranks, {len(intervals)} intervals, total {total:.4f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
