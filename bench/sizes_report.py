#!/usr/bin/env python3
"""Tables, plot and per-call overhead of the small and mid-sized runs (issue 26,
bench/device/sizes.sh).

  python3 bench/sizes_report.py runs.jsonl [more.jsonl ...] [--plot sizes.png]
      [--speedup speedup.png] [--overhead overhead.jsonl timeline_*.json]
      [--device-stages a,b,...] [--top 3]

Tables: one per (GPU count, JOBZ) of the records' "gpus" and "jobz" fields; a row per solver (the
record's label less its _<g>gpu and _<JOBZ> parts), a column per n; a cell is the median of the
repeated calls (calls 2.. of one process at that n) and, in parentheses, the time of that n's first
call, marked * where it was the process's first call (the first record of its label's run of lines
in a file; sizes.sh runs every n of a setting in one process). Rows <X>_first (sizes.sh's FIRST=1,
one process of a single call per n) give row X its process's first call at every n. Below each
table, for each row of pipevd's auto path (a pipevd row whose label names no forced path), its
repeated time over the fastest peer's (a solver other than pipevd, not a host row) at each n, and
that peer: below 1, pipevd is faster; a peer without repeated calls (scaling.sh runs peers once
per process) counts with its only call, marked "(first)". A second row, "<row>, first call", sets
pipevd's first call against the peers' first calls. scaling.sh's labels work too: their n part
is dropped from the row. Only records with status "ok" count.

Host rows: a label with a part host<cores>c (sizes.sh's scalapack_host64c_V, ScaLAPACK's pdsyevd on
the host's 64 cores; scalapack_host64c_16ranks_V on 16 ranks of 4 threads) is a run on the host's
cores that no GPU count changes, run once: its row stands in every table of its JOBZ (a JOBZ
without a GPU table gets a table of its own, "Host cores"), and it is no peer of the ratio to the
fastest peer (the GPU peers'). Issue 26 sets pipevd against ScaLAPACK on the host's cores
separately: below each table with ScaLAPACK host rows, "pipevd / ScaLAPACK(host)": each auto row's
repeated time over the fastest ScaLAPACK host row's at each n, and that row (the same fallback to
an only call as above), and its first call over their first calls.

--plot FILE: median repeated time against n (a row without repeated calls: its only call, so
labelled), log-log, a line per row, one panel per GPU count (JOBZ=N dashed; host rows, square
markers, in every panel of their JOBZ). matplotlib is imported only here; without it the tables
still print, and the script exits with 77 after them.

--speedup FILE: pipevd's speed-up over each peer against n, one panel per GPU count: for each row
of pipevd's auto path and each peer row of its table (host rows too, square markers), the peer's
median repeated call (else its only call) over pipevd's median repeated call at each n where both
exist (above 1: pipevd faster), log-log, JOBZ=N dashed. Ratios only within a table, so within the
runs of one file set: give it one run's lines. matplotlib as for --plot.

--overhead: per-call overhead of pipevd runs from their PIPEVD_VERBOSE=2 timelines (the files
sizes.sh's OVERHEAD=1 writes, named timeline_<label>_n<n>.json, each the process's last call at
that n; scaling.sh's timeline<label less "pipevd">.json are read too) and the JSON lines of those
runs (.jsonl), which give the call's wall time (the record of that label and n with the highest
"repeat"; without one, the timeline's span is taken). The solver's device work is the union,
over every engine rank and thread, of the intervals of the device stages (--device-stages; by
default the one-stage path's upload, solve and download and the two-stage engine's stages from
DBBR to the final GEMM); outside = wall - that union. The outside time is attributed to the other
intervals of the timeline (a main-thread interval first, the lowest rank first), and time under
none of them to "untracked after <the last main-thread stage that ended before it>"; the --top
longest outside pieces are listed. The timeline costs a little itself (its file is written inside
the call, after its last interval), so next to the wall time stands the median repeated call of
the same setting without it (the label less "_timeline") where the positional runs hold it. A
timeline file that does not exist is reported and skipped.
"""
import argparse
import json
import os
import re
import statistics
import sys
from collections import defaultdict

# The solver's device work on the timeline: the one-stage path's parts and the two-stage engine's
# stages (core/one_stage.cpp, core/engine.cpp, core/final_product.cpp).
DEVICE_STAGES = (
    "upload", "solve", "download",
    "dbbr", "sbr_back_start", "bulge_chasing", "dc", "dc_wait", "sbr_back", "bc_back",
    "qd_broadcast", "qpre_broadcast", "pre_gemm", "m_broadcast", "gemm",
)
FORCED_PATHS = ("one_stage", "two_stage")
SKIP_CODE = 77
# The GPU count of a table of host rows only (a JOBZ without GPU rows).
HOST = "host"


def read_records(paths):
    """Every ok record of the files, with "process_first" set on a process's first call."""
    records = []
    for path in paths:
        previous = None
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:  # a run cut mid-line by its cap
                    print("skipped a cut line in %s" % path, file=sys.stderr)
                    continue
                label = r.get("label", r.get("solver", "?"))
                # A _first run is one call per process (sizes.sh's FIRST=1).
                r["process_first"] = r.get("call") == "first" and (
                    label != previous or row_name(r).endswith("_first"))
                previous = label
                if r.get("status") == "ok" and isinstance(r.get("time_s"), (int, float)):
                    records.append(r)
    return records


def row_name(r):
    """The label less its GPU count, n and JOBZ parts: the solver and setting."""
    label = r.get("label", r.get("solver", "?"))
    parts = label.split("_")
    if parts and parts[-1] == r.get("jobz"):
        parts = parts[:-1]
    # The label's GPU count (the record's "gpus" may differ: 0 on the host engine) and the n that
    # scaling.sh's labels carry (pipevd_4gpu_n32768, elpa2-gpu_1gpu_n8192_8pergpu_nb16).
    parts = [p for p in parts if not re.fullmatch(r"\d+gpus?|n\d+", p)]
    return "_".join(parts) or label


def is_peer(r):
    return r.get("solver") != "pipevd"


def is_host(name):
    """A row on the host's cores, the same at every GPU count (a part host<cores>c)."""
    return any(re.fullmatch(r"host\d+c", p) for p in name.split("_"))


def gpu_order(gpus):
    """Tables and panels by GPU count, a host-only one last."""
    return (gpus == HOST, 0 if gpus == HOST else gpus or 0)


def gpu_title(gpus):
    return "Host cores" if gpus == HOST else "%s GPU%s" % (gpus, "" if gpus == 1 else "s")


def is_auto(name, solver):
    return solver == "pipevd" and not any(p in name for p in FORCED_PATHS)


def fmt_time(t):
    return "%.4g" % t


class Cell:
    def __init__(self):
        self.repeated = []
        self.first = None
        self.process_first = False

    def median(self):
        return statistics.median(self.repeated) if self.repeated else None

    def usual(self):
        """The median repeated call, else the only call (a peer run once per process, as
        scaling.sh runs them), with whether it was a first call."""
        m = self.median()
        return (m, False) if m is not None else (self.first, self.first is not None)


def tables(records):
    """{(gpus, jobz): {row: {n: Cell}}}, the rows' solvers and the cards of each group. Host rows
    are in every group of their JOBZ (the same cells), else in a group (HOST, jobz)."""
    groups = defaultdict(lambda: defaultdict(lambda: defaultdict(Cell)))
    solver_of, cards = {}, defaultdict(set)
    host = defaultdict(lambda: defaultdict(lambda: defaultdict(Cell)))  # {jobz: {row: {n: Cell}}}
    for r in records:
        name = row_name(r)
        if name.endswith("_first"):  # FIRST=1's single calls go into their setting's row
            name = name[:-len("_first")]
        solver_of[name] = r.get("solver")
        key = (HOST, r.get("jobz")) if is_host(name) else (r.get("gpus"), r.get("jobz"))
        if r.get("card"):
            cards[key].add(r["card"])
        cell = (host[key[1]] if key[0] == HOST else groups[key])[name][r["n"]]
        if r.get("call") == "repeated":
            cell.repeated.append(r["time_s"])
        elif r.get("call") == "first" and (r["process_first"] or not cell.process_first):
            # A process's first call wins over a warm process's first call at that n.
            cell.first = r["time_s"]
            cell.process_first = r["process_first"]
    for jobz, rows in host.items():
        for key in [k for k in groups if k[1] == jobz] or [(HOST, jobz)]:
            groups[key].update(rows)
            cards[key] |= cards[(HOST, jobz)]
    return groups, solver_of, cards


def print_tables(groups, solver_of, cards, out):
    for key in sorted(groups, key=lambda k: (gpu_order(k[0]), k[1] != "V", str(k[1]))):
        gpus, jobz = key
        rows = groups[key]
        ns = sorted({n for cells in rows.values() for n in cells})
        card = ", ".join(sorted(cards[key])) or "card not recorded"
        out.write("\n### %s, JOBZ=%s (%s)\n\n" % (gpu_title(gpus), jobz, card))
        out.write("Median repeated call in s (first call at that n; * the process's first call)\n\n")
        out.write("| solver | " + " | ".join("n=%d" % n for n in ns) + " |\n")
        out.write("| --- |" + " ---: |" * len(ns) + "\n")
        for name in sorted(rows):
            cells = []
            for n in ns:
                c = rows[name].get(n)
                if c is None:
                    cells.append("-")
                    continue
                m = c.median()
                text = fmt_time(m) if m is not None else "-"
                if c.first is not None:
                    text += " (%s%s)" % (fmt_time(c.first), "*" if c.process_first else "")
                cells.append(text)
            out.write("| %s | %s |\n" % (name, " | ".join(cells)))
        peers = [name for name in rows if solver_of[name] != "pipevd" and not is_host(name)]
        scalapack = [name for name in rows if is_host(name) and solver_of[name] == "scalapack"]
        autos = [name for name in rows if is_auto(name, solver_of[name])]
        for heading, against in (("ratio to the fastest peer", peers),
                                 ("pipevd / ScaLAPACK(host)", scalapack)):
            if against and autos:
                ratio_table(rows, heading, autos, against, ns, out)


def ratio_table(rows, heading, autos, against, ns, out):
    """Each auto row's repeated time and first call over the fastest of the rows `against`."""
    out.write("\n| %s | " % heading + " | ".join("n=%d" % n for n in ns) + " |\n")
    out.write("| --- |" + " ---: |" * len(ns) + "\n")
    for name in sorted(autos):
        out.write("| %s | %s |\n" % (name, " | ".join(
            ratio_cell(rows, name, against, n, Cell.median, Cell.usual) for n in ns)))
        out.write("| %s, first call | %s |\n" % (name, " | ".join(
            ratio_cell(rows, name, against, n, lambda c: c.first, first_call) for n in ns)))


def first_call(cell):
    return cell.first, False


def ratio_cell(rows, name, peers, n, mine_of, peer_of):
    """pipevd's time over the fastest peer's at n ("-" where either is missing): mine_of(cell)
    pipevd's time, peer_of(cell) a peer's (time, whether it is that peer's first call, marked)."""
    mine = mine_of(rows[name][n]) if n in rows[name] else None
    times = [(peer_of(rows[p][n]), p) for p in peers if n in rows[p]]
    best = min(((t, first, p) for (t, first), p in times if t is not None), default=None)
    if mine is None or best is None:
        return "-"
    return "%.2f %s%s" % (mine / best[0], best[2], " (first)" if best[1] else "")


def panel_plot(groups, names, path, ylabel, draw, reference=None):
    """One log-log panel per GPU count, draw(ax, rows, jobz, colour) drawing each table's lines
    into its panel; one colour per name across the panels, so a line is found by its colour; a
    horizontal line at `reference` where given."""
    import matplotlib  # lazily: the tables need no matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = sorted({k[0] for k in groups}, key=gpu_order)
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour = {name: palette[i % len(palette)] for i, name in enumerate(sorted(names))}
    fig, axes = plt.subplots(1, len(counts), figsize=(6.5 * len(counts), 4.8), squeeze=False)
    for ax, gpus in zip(axes[0], counts):
        for (g, jobz), rows in sorted(groups.items(), key=lambda kv: str(kv[0][1])):
            if g == gpus:
                draw(ax, rows, jobz, colour)
        if reference is not None:
            ax.axhline(reference, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel(ylabel)
        ax.set_title(gpu_title(gpus))
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:  # a panel with nothing to compare stays bare
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot(groups, path):
    def draw(ax, rows, jobz, colour):
        for name in sorted(rows):
            usual = [(n, c.usual()) for n, c in rows[name].items()]
            pts = sorted((n, t) for n, (t, _) in usual if t is not None)
            first = any(f for _, (t, f) in usual if t is not None)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts],
                        marker="s" if is_host(name) else "o",
                        color=colour[name], linestyle="--" if jobz == "N" else "-",
                        label="%s %s%s" % (name, jobz, " (its only call)" if first else ""))

    names = {name for rows in groups.values() for name in rows}
    panel_plot(groups, names, path, "median repeated call, else the only call (s)", draw)


def speedup_plot(groups, solver_of, path):
    def draw(ax, rows, jobz, colour):
        peers = sorted(name for name in rows if solver_of[name] != "pipevd")
        for auto in sorted(name for name in rows if is_auto(name, solver_of[name])):
            for peer in peers:
                pts = []
                for n, cell in rows[auto].items():
                    mine = cell.median()
                    theirs = rows[peer][n].usual()[0] if n in rows[peer] else None
                    if mine and theirs:
                        pts.append((n, theirs / mine))
                if pts:
                    pts.sort()
                    ax.plot([p[0] for p in pts], [p[1] for p in pts],
                            marker="s" if is_host(peer) else "o", color=colour[peer],
                            linestyle="--" if jobz == "N" else "-",
                            label="%s over %s %s" % (peer, auto, jobz))

    peers = {name for rows in groups.values() for name in rows if solver_of[name] != "pipevd"}
    panel_plot(groups, peers, path, "peer's time / pipevd's (above 1: pipevd faster)", draw,
               reference=1.0)


def union(intervals):
    merged = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def complement(merged, lo, hi):
    gaps, t = [], lo
    for a, b in merged:
        if a > t:
            gaps.append((t, min(a, hi)))
        t = max(t, b)
        if t >= hi:
            break
    if t < hi:
        gaps.append((t, hi))
    return [(a, b) for a, b in gaps if b > a]


def overhead(timeline, wall, device_stages):
    """wall, device-work seconds and the outside pieces [(start, end, name)] of one timeline."""
    iv = timeline["intervals"]
    begin = min(i["start"] for i in iv)
    end = max(i["end"] for i in iv)
    if wall is None:
        wall = end - begin
    hi = begin + wall
    device = union([(max(i["start"], begin), min(i["end"], hi)) for i in iv
                    if i["stage"] in device_stages and i["end"] > begin and i["start"] < hi])
    covered = sum(b - a for a, b in device)
    others = [i for i in iv if i["stage"] not in device_stages]
    # Attribution order: main-thread intervals first, then the lowest rank.
    others.sort(key=lambda i: (i["thread"] != "main", i["rank"], i["start"]))
    main0 = sorted((i for i in iv if i["thread"] == "main" and i["rank"] == min(j["rank"] for j in iv)),
                   key=lambda i: i["end"])
    pieces = []
    for a, b in complement(device, begin, hi):
        cuts = sorted({a, b} | {t for i in others for t in (i["start"], i["end"]) if a < t < b})
        for s, e in zip(cuts, cuts[1:]):
            mid = 0.5 * (s + e)
            owner = next((i for i in others if i["start"] <= mid < i["end"]), None)
            if owner is not None:
                name = owner["stage"] + ("" if owner["thread"] == "main" else " (%s)" % owner["thread"])
            else:
                before = [i["stage"] for i in main0 if i["end"] <= mid]
                name = "untracked after %s" % (before[-1] if before else "the call's start")
            if pieces and pieces[-1][2] == name and abs(pieces[-1][1] - s) < 1e-12:
                pieces[-1][1] = e
            else:
                pieces.append([s, e, name])
    return wall, covered, pieces


def timeline_key(path):
    m = re.match(r"timeline_(.+)_n(\d+)\.json$", os.path.basename(path))
    return (m.group(1), int(m.group(2))) if m else (None, None)


def print_overhead(files, records, plain, device_stages, top, out):
    """The overhead table; `plain` are the runs without the timeline ({(label, n): Cell})."""
    walls = {}
    for r in records:
        key = (r.get("label"), r.get("n"))
        if key not in walls or r.get("repeat", 0) > walls[key].get("repeat", 0):
            walls[key] = r
    out.write("\n### Per-call overhead (outside the solver's device work)\n\n")
    out.write("wall: the timeline's call (with the timeline's own cost: the tail after its last "
              "interval holds the file's write); plain: the median repeated call of the same "
              "setting without the timeline\n\n")
    out.write("| run | n | path | ranks (engine) | wall s | plain s | device work s | outside s | "
              "outside % | longest outside pieces (ms) |\n")
    out.write("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
    rows = []
    for path in files:
        if not os.path.exists(path):
            print("sizes_report: no timeline %s" % path, file=sys.stderr)
            continue
        with open(path) as f:
            tl = json.load(f)
        label, n = timeline_key(path)
        n = n if n is not None else tl.get("n")
        # scaling.sh names its timelines timeline<label less "pipevd">.json.
        stem = os.path.basename(path)[len("timeline"):-len(".json")]
        rows.append((label or os.path.basename(path), n, tl, "pipevd" + stem))
    for label, n, tl, scaling_label in sorted(rows, key=lambda r: (r[0], r[1])):
        rec = walls.get((label, n)) or walls.get((scaling_label, n))
        wall = rec["time_s"] if rec else None
        wall, covered, pieces = overhead(tl, wall, device_stages)
        stages = {i["stage"] for i in tl["intervals"]}
        route = rec.get("path") if rec and rec.get("path") else (
            "one_stage" if "solve" in stages else "two_stage")
        base = label[:-len("_timeline")] if label.endswith("_timeline") else label
        cell = plain.get((base, n))
        median = cell.median() if cell else None
        outside = wall - covered
        longest = sorted(pieces, key=lambda p: p[0] - p[1])[:top]
        listed = "; ".join("%s %.2f" % (p[2], 1e3 * (p[1] - p[0])) for p in longest)
        out.write("| %s%s | %d | %s | %s | %s | %s | %s | %s | %.0f%% | %s |\n" % (
            label, "" if rec else " (wall: timeline span)", n, route,
            "%s (%s)" % (rec.get("ranks", "?") if rec else "?", tl.get("ranks", "?")),
            fmt_time(wall), fmt_time(median) if median is not None else "-", fmt_time(covered),
            fmt_time(outside), 100 * outside / wall if wall > 0 else 0, listed or "-"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="*", help="runs.jsonl files")
    ap.add_argument("--plot", metavar="FILE.png")
    ap.add_argument("--speedup", metavar="FILE.png")
    ap.add_argument("--overhead", nargs="+", default=[], metavar="FILE",
                    help="timeline_<label>_n<n>.json files and the .jsonl records of their runs")
    ap.add_argument("--device-stages", default=",".join(DEVICE_STAGES))
    ap.add_argument("--top", type=int, default=3)
    a = ap.parse_args()
    if not a.runs and not a.overhead:
        ap.error("no runs.jsonl and no --overhead files")
    out = sys.stdout
    records = read_records(a.runs)
    groups, solver_of, cards = tables(records)
    print_tables(groups, solver_of, cards, out)
    if a.overhead:
        timelines = [p for p in a.overhead if p.endswith(".json")]
        walls = read_records([p for p in a.overhead if not p.endswith(".json")])
        plain = defaultdict(Cell)
        for r in records:
            if r.get("call") == "repeated":
                plain[(r.get("label"), r.get("n"))].repeated.append(r["time_s"])
        print_overhead(timelines, walls, plain, set(a.device_stages.split(",")), a.top, out)
    for path, draw in ((a.plot, lambda p: plot(groups, p)),
                       (a.speedup, lambda p: speedup_plot(groups, solver_of, p))):
        if not path:
            continue
        if not groups:
            print("sizes_report: no runs to plot", file=sys.stderr)
            return 1
        try:
            draw(path)
        except ImportError as e:
            print("sizes_report: no plot (%s)" % e, file=sys.stderr)
            return SKIP_CODE
        print("\nplot: %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
