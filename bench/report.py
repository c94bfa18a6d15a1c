#!/usr/bin/env python3
"""Tables and plots of a comparison campaign from pipevd-bench's JSON lines.

  report.py --jsonl runs.jsonl [--jsonl more.jsonl] --section NAME --results bench/RESULTS.md \
            --plots DIR --title "..." --command "..." [--device "..."]

For each GPU count in the runs (CPU-only runs join every table as the baseline) it writes a
Markdown table (best time over repeats per solver and n; speedup of pipevd over each peer) and,
where matplotlib is importable, two PNGs: time vs n per solver, and pipevd's speedup over each.
The text replaces what lies between <!-- BEGIN NAME --> and <!-- END NAME --> in --results.
Only runs whose status is "ok" carry a time (the driver withholds it otherwise); failed,
unsupported and absent runs are listed under the table with their reason.
"""
import argparse
import collections
import datetime
import json
import os
import re
import sys


def load(paths):
    runs = []
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        runs.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass
    return runs


def label(run):
    """Solver with its resources, e.g. 'cusolvermp (4 GPUs)', 'scalapack (16 ranks, CPU)';
    complex Hermitian runs are told apart from real ones ('pipevd complex (1 GPU)')."""
    name = run["solver"] + (" complex" if run.get("scalar") == "complex" else "")
    if run.get("gpus", 0) == 0:
        ranks = run.get("ranks", 1)
        return "%s (%d rank%s, CPU)" % (name, ranks, "" if ranks == 1 else "s")
    return "%s (%d GPU%s)" % (name, run["gpus"], "" if run["gpus"] == 1 else "s")


def best_times(runs):
    best = {}
    for r in runs:
        if r.get("status") == "ok" and r.get("time_s") is not None:
            key = (label(r), r["n"])
            best[key] = min(best.get(key, float("inf")), r["time_s"])
    return best


def groups(runs):
    """GPU count -> the runs of that count plus every CPU run (the baseline)."""
    cpu = [r for r in runs if r.get("gpus", 0) == 0 and "n" in r]
    counts = sorted({r["gpus"] for r in runs if r.get("gpus", 0) > 0 and "n" in r})
    if not counts:
        return {0: cpu}
    return {g: [r for r in runs if r.get("gpus") == g and "n" in r] + cpu for g in counts}


def table(runs):
    best = best_times(runs)
    labels = sorted({k[0] for k in best}, key=lambda s: (not s.startswith("pipevd"), s))
    sizes = sorted({k[1] for k in best})
    if not labels:
        return "(no run passed its accuracy check)\n", labels, sizes, best
    out = ["| n | " + " | ".join(labels) + " |", "|---:|" + "---:|" * len(labels)]
    for n in sizes:
        cells = ["%.3f" % best[(l, n)] if (l, n) in best else "—" for l in labels]
        out.append("| %d | %s |" % (n, " | ".join(cells)))
    text = "Time in seconds (best of the repeats; accuracy checked on every run).\n\n" + "\n".join(out) + "\n"
    pipevd = [l for l in labels if l.startswith("pipevd")]
    if pipevd:
        p = pipevd[0]
        peers = [l for l in labels if l != p]
        rows = []
        for n in sizes:
            if (p, n) not in best:
                continue
            cells = ["%.2f×" % (best[(l, n)] / best[(p, n)]) if (l, n) in best else "—" for l in peers]
            rows.append("| %d | %s |" % (n, " | ".join(cells)))
        if peers and rows:
            text += ("\nSpeedup of %s over each peer (peer time / pipevd time):\n\n" % p
                     + "| n | " + " | ".join(peers) + " |\n|---:|" + "---:|" * len(peers) + "\n"
                     + "\n".join(rows) + "\n")
    return text, labels, sizes, best


def accuracy(runs):
    """Worst residual, orthogonality and eigenvalue difference (units of n eps) per solver."""
    worst = collections.OrderedDict()
    for r in runs:
        if r.get("status") != "ok":
            continue
        w = worst.setdefault(label(r), [0.0, 0.0, 0.0])
        eps_n = 2.220446049250313e-16 * max(r["n"], 1)
        for i, v in enumerate((r.get("residual"), r.get("orthogonality"),
                               None if r.get("eigenvalue_diff") is None else r["eigenvalue_diff"] / eps_n)):
            if v is not None:
                w[i] = max(w[i], v)
    if not worst:
        return ""
    rows = ["| solver | residual | orthogonality | eigenvalue diff / (n ε) |", "|---|---:|---:|---:|"]
    for l in sorted(worst, key=lambda s: (not s.startswith("pipevd"), s)):
        rows.append("| %s | %.3g | %.3g | %.3g |" % ((l,) + tuple(worst[l])))
    return "\nWorst accuracy over the timed runs (threshold 100 on each):\n\n" + "\n".join(rows) + "\n"


def problems(runs):
    seen, lines = set(), []
    for r in runs:
        if r.get("status") in (None, "ok"):
            continue
        key = (r.get("solver"), r.get("n"), r.get("status"), r.get("error", ""))
        if key in seen:
            continue
        seen.add(key)
        acc = ""
        if r.get("status") == "accuracy-failed":
            acc = " (residual %s, orthogonality %s, eigenvalue diff %s)" % (
                r.get("residual"), r.get("orthogonality"), r.get("eigenvalue_diff"))
        lines.append("- %s%s: %s%s%s" % (r.get("solver"), " n=%s" % r["n"] if "n" in r else "",
                                         r.get("status"), acc,
                                         " — " + r["error"] if r.get("error") else ""))
    return lines


def plots(labels, sizes, best, plots_dir, stem, title):
    if not labels:
        return []
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    os.makedirs(plots_dir, exist_ok=True)
    files = []

    def save(fig, ax, ylabel, what, suffix):
        # Both plots: log n axis, labels, grid and legend, written to STEM_SUFFIX.png.
        ax.set_xscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel(ylabel)
        ax.set_title(title + ": " + what)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
        path = os.path.join(plots_dir, stem + "_" + suffix + ".png")
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for l in labels:
        pts = [(n, best[(l, n)]) for n in sizes if (l, n) in best]
        if pts:
            ax.plot(*zip(*pts), marker="o", label=l)
    ax.set_yscale("log")
    save(fig, ax, "time (s)", "time vs n", "time")
    pipevd = [l for l in labels if l.startswith("pipevd")]
    if pipevd:
        p = pipevd[0]
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        for l in labels:
            if l == p:
                continue
            pts = [(n, best[(l, n)] / best[(p, n)]) for n in sizes if (l, n) in best and (p, n) in best]
            if pts:
                ax.plot(*zip(*pts), marker="o", label="over " + l)
        ax.axhline(1.0, color="grey", lw=0.8)
        save(fig, ax, "speedup of %s" % p, "speedup of pipevd", "speedup")
    return files


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jsonl", action="append", required=True)
    ap.add_argument("--section", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--plots", required=True)
    ap.add_argument("--title", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--device", default="")
    ap.add_argument("--date", default=datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"))
    a = ap.parse_args()

    runs = load(a.jsonl)
    results_dir = os.path.dirname(os.path.abspath(a.results))
    body = ["_Generated by bench/report.py: %s. Device: %s._" % (a.date, a.device or "see runs"), "",
            "```", a.command, "```", ""]
    for g, rs in sorted(groups(runs).items()):
        heading = "CPU only" if g == 0 else "%d GPU%s" % (g, "" if g == 1 else "s")
        text, labels, sizes, best = table(rs)
        body += ["#### %s — %s" % (a.title, heading), "", text + accuracy(rs)]
        stem = "%s_%s" % (a.section, "cpu" if g == 0 else "%dgpu" % g)
        for f in plots(labels, sizes, best, a.plots, stem, "%s, %s" % (a.title, heading)):
            body.append("![%s](%s)" % (os.path.basename(f), os.path.relpath(f, results_dir)))
        body.append("")
    issues = problems(runs)
    if issues:
        body += ["Runs without a time:", ""] + issues + [""]
    text = "\n".join(body)

    begin, end = "<!-- BEGIN %s -->" % a.section, "<!-- END %s -->" % a.section
    doc = open(a.results).read() if os.path.exists(a.results) else "# Comparison runs\n"
    block = begin + "\n" + text + "\n" + end
    if begin in doc and end in doc:
        doc = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda m: block, doc, flags=re.S)
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    with open(a.results, "w") as f:
        f.write(doc)
    print("updated %s (section %s, %d runs)" % (a.results, a.section, len(runs)))


if __name__ == "__main__":
    sys.exit(main())
