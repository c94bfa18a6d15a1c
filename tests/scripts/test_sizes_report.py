#!/usr/bin/env python3
"""Checks of bench/sizes_report.py and bench/device/sizes.sh (issue 26's small-size runs).

  test_sizes_report.py ReportTest          # the report on tests/data/sizes (no build needed)
  test_sizes_report.py SizesScriptTest     # sizes.sh end to end on the host engine; needs
                                           # PIPEVD_BUILD_DIR (a build with bench/pipevd-bench)

The fixture runs.jsonl holds made-up times chosen so that every median and ratio is exact.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REPORT = os.path.join(ROOT, "bench", "sizes_report.py")
DATA = os.path.join(ROOT, "tests", "data", "sizes")
TIMELINE = os.path.join(DATA, "timeline_pipevd_auto_1gpu_8callers_V_timeline_n2000.json")


def read(path):
    with open(path) as f:
        return f.read()


def report(*args, env=None):
    p = subprocess.run([sys.executable, REPORT, *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def section(text, heading):
    """The lines of the markdown section that starts with `heading`."""
    start = text.index(heading)
    end = text.find("\n### ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def host_label(ranks, jobz, first=False):
    """sizes.sh's label of its ScaLAPACK run on this host's cores with `ranks` ranks."""
    cores = len(os.sched_getaffinity(0))
    label = "scalapack_host%dc" % cores
    if ranks != cores:
        label += "_%drank%s" % (ranks, "s" if ranks > 1 else "")
    return label + ("_first" if first else "") + "_" + jobz


def row(text, name):
    """The cells of the table row `name` (the first in `text`)."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == name:
            return cells[1:]
    raise AssertionError("no row %r in:\n%s" % (name, text))


def without_matplotlib(tmp):
    """An environment whose matplotlib cannot be imported (a package in tmp that raises)."""
    fake = os.path.join(tmp, "fake", "matplotlib")
    os.makedirs(fake)
    with open(os.path.join(fake, "__init__.py"), "w") as f:
        f.write("raise ImportError('no matplotlib here')\n")
    return dict(os.environ, PYTHONPATH=os.path.dirname(fake))


class ReportTest(unittest.TestCase):
    def setUp(self):
        rc, self.out, err = report(os.path.join(DATA, "runs.jsonl"))
        self.assertEqual(rc, 0, err)

    def test_one_table_per_gpu_count_and_jobz(self):
        headings = re.findall(r"^### (.*)$", self.out, re.M)
        self.assertEqual(headings, ["1 GPU, JOBZ=V (TEST CARD)", "1 GPU, JOBZ=N (TEST CARD)",
                                    "4 GPUs, JOBZ=V (TEST CARD)"])

    def test_cells_are_median_repeated_and_first_call(self):
        one = section(self.out, "### 1 GPU, JOBZ=V")
        # Calls 1..3 at n=1000 are 0.02, 0.03, 0.07 (0.03 the median, not the mean), call 0 the
        # process's first call; n=2000's call 0 is a first call at that n in a warm process.
        # cuSOLVER's row takes its _first runs' (one process per n): a process's first call at
        # n=2000 (0.09) over the warm process's (0.08); the later one at 1000 (0.45) over 0.5.
        self.assertEqual(row(one, "cusolver"), ["0.03 (0.45*)", "0.06 (0.09*)"])
        self.assertEqual(row(one, "pipevd_auto"), ["0.02 (0.4*)", "0.035 (0.05)"])
        self.assertEqual(row(one, "pipevd_auto_8callers"), ["0.08 (0.9*)", "0.11 (0.3)"])
        self.assertEqual(row(one, "pipevd_two_stage"), ["0.1 (0.6*)", "0.2 (0.2)"])

    def test_failed_calls_do_not_count(self):
        four = section(self.out, "### 4 GPUs, JOBZ=V")
        self.assertEqual(row(four, "cusolvermp"), ["0.2 (1*)", "0.4 (1)"])

    def test_ratio_of_auto_path_to_fastest_peer(self):
        one = section(self.out, "### 1 GPU, JOBZ=V")
        ratios = one[one.index("| ratio to the fastest peer"):]
        # ScaLAPACK on the host's cores (faster at n=1000) is no peer of this ratio.
        self.assertEqual(row(ratios, "pipevd_auto"), ["0.67 cusolver", "0.58 cusolver"])
        self.assertEqual(row(ratios, "pipevd_auto_8callers"), ["2.67 cusolver", "1.83 cusolver"])
        with self.assertRaises(AssertionError):  # a forced path gets no ratio
            row(ratios, "pipevd_two_stage")
        four = section(self.out, "### 4 GPUs, JOBZ=V")
        ratios = four[four.index("| ratio to the fastest peer"):]
        # The fastest peer changes with n.
        self.assertEqual(row(ratios, "pipevd_auto"), ["0.50 cusolvermp", "2.00 cusolvermg"])

    def test_host_rows_in_every_table_of_their_jobz(self):
        # ScaLAPACK on the host's 64 cores: one run per JOBZ, in the 1- and the 4-GPU tables.
        for heading in ("### 1 GPU, JOBZ=V", "### 4 GPUs, JOBZ=V"):
            table = section(self.out, heading)
            self.assertEqual(row(table, "scalapack_host64c"), ["0.01 (0.05*)", "0.1 (0.2)"])
            self.assertEqual(row(table, "scalapack_host64c_16ranks"),
                             ["0.04 (0.1*)", "0.07 (0.25)"])
        self.assertEqual(row(section(self.out, "### 1 GPU, JOBZ=N"), "scalapack_host64c"),
                         ["0.04 (0.04*)"])

    def test_ratio_of_auto_path_to_scalapack_on_the_host(self):
        one = section(self.out, "### 1 GPU, JOBZ=V")
        ratios = one[one.index("| pipevd / ScaLAPACK(host)"):]
        # The fastest host row changes with n (64 ranks, then 16 ranks x 4 threads).
        self.assertEqual(row(ratios, "pipevd_auto"),
                         ["2.00 scalapack_host64c", "0.50 scalapack_host64c_16ranks"])
        self.assertEqual(row(ratios, "pipevd_auto, first call"),
                         ["8.00 scalapack_host64c", "0.25 scalapack_host64c"])
        with self.assertRaises(AssertionError):  # a forced path gets no ratio
            row(ratios, "pipevd_two_stage")
        four = section(self.out, "### 4 GPUs, JOBZ=V")
        ratios = four[four.index("| pipevd / ScaLAPACK(host)"):]
        self.assertEqual(row(ratios, "pipevd_auto"),
                         ["10.00 scalapack_host64c", "8.57 scalapack_host64c_16ranks"])
        n = section(self.out, "### 1 GPU, JOBZ=N")
        self.assertEqual(row(n[n.index("| pipevd / ScaLAPACK(host)"):], "pipevd_auto"),
                         ["0.50 scalapack_host64c"])

    def test_host_rows_without_a_gpu_table_get_their_own(self):
        lines = [
            {"label": "scalapack_host16c_V", "solver": "scalapack", "jobz": "V", "gpus": 0,
             "call": "first", "time_s": 2.0},
            {"label": "scalapack_host16c_V", "solver": "scalapack", "jobz": "V", "gpus": 0,
             "call": "repeated", "time_s": 1.0},
            {"label": "pipevd_auto_1gpu_N", "solver": "pipevd", "jobz": "N", "gpus": 1,
             "call": "repeated", "time_s": 0.5},
        ]
        with tempfile.TemporaryDirectory() as tmp:
            runs = os.path.join(tmp, "runs.jsonl")
            with open(runs, "w") as f:
                for line in lines:
                    f.write(json.dumps(dict(line, n=4000, status="ok", card="TEST CARD")) + "\n")
            rc, out, err = report(runs)
        self.assertEqual(rc, 0, err)
        headings = re.findall(r"^### (.*)$", out, re.M)
        self.assertEqual(headings, ["1 GPU, JOBZ=N (TEST CARD)", "Host cores, JOBZ=V (TEST CARD)"])
        self.assertEqual(row(section(out, "### Host cores"), "scalapack_host16c"), ["1 (2*)"])
        self.assertNotIn("ScaLAPACK(host)", out)  # no JOBZ with both

    def test_scaling_labels_and_peers_run_once(self):
        # scaling.sh's records: n in the label, peers one call per process (a first call only).
        lines = [
            {"label": "pipevd_4gpu_n32768", "call": "first", "time_s": 8.0},
            {"label": "pipevd_4gpu_n32768", "call": "repeated", "time_s": 4.0},
            {"label": "cusolvermp_4gpu_n32768", "call": "first", "time_s": 16.0},
            {"label": "elpa2-gpu_4gpu_n32768_4pergpu_nb16", "call": "first", "time_s": 32.0},
        ]
        with tempfile.TemporaryDirectory() as tmp:
            runs = os.path.join(tmp, "runs.jsonl")
            with open(runs, "w") as f:
                for i, line in enumerate(lines):
                    solver = line["label"].split("_")[0]
                    f.write(json.dumps(dict(line, solver=solver, n=32768, gpus=4, jobz="V",
                                            status="ok", card="TEST CARD",
                                            repeat=int(line["call"] == "repeated"))) + "\n")
            rc, out, err = report(runs)
        self.assertEqual(rc, 0, err)
        four = section(out, "### 4 GPUs, JOBZ=V")
        self.assertEqual(row(four, "pipevd"), ["4 (8*)"])
        self.assertEqual(row(four, "cusolvermp"), ["- (16*)"])
        self.assertEqual(row(four, "elpa2-gpu_4pergpu_nb16"), ["- (32*)"])
        ratios = four[four.index("| ratio to the fastest peer"):]
        # Repeated against the peer's only call, marked; first call against first call.
        self.assertEqual(row(ratios, "pipevd"), ["0.25 cusolvermp (first)"])
        self.assertEqual(row(ratios, "pipevd, first call"), ["0.50 cusolvermp"])

    def test_overhead_outside_device_work(self):
        rc, out, err = report(os.path.join(DATA, "runs.jsonl"), "--overhead", TIMELINE,
                              os.path.join(DATA, "overhead.jsonl"), "--top", "8")
        self.assertEqual(rc, 0, err)
        cells = row(out, "pipevd_auto_1gpu_8callers_V_timeline")
        # wall 0.055 s (the last call's record), device work = upload + solve + download 0.024 s;
        # the same setting's median without the timeline (runs.jsonl) 0.11 s.
        self.assertEqual(cells[:8],
                         ["2000", "one_stage", "8 (1)", "0.055", "0.11", "0.024", "0.031", "56%"])
        pieces = dict(re.match(r"(.*) ([0-9.]+)$", p).groups() for p in cells[8].split("; "))
        self.assertEqual(pieces, {
            "redistribute_in": "10.00", "redistribute_out": "10.00",
            "untracked after download": "3.00", "untracked after redistribute_out": "3.00",
            "entry": "2.00", "plan": "1.00", "engine_setup": "1.00",
            "engine_release (release)": "1.00"})
        self.assertAlmostEqual(sum(float(v) for v in pieces.values()), 31.0, places=6)

    def test_overhead_without_a_record_takes_the_span(self):
        rc, out, err = report("--overhead", TIMELINE, os.path.join(DATA, "missing.json"),
                              "--top", "1")
        self.assertEqual(rc, 0, err)
        cells = row(out, "pipevd_auto_1gpu_8callers_V_timeline (wall: timeline span)")
        self.assertEqual(cells[3:7], ["0.052", "-", "0.024", "0.028"])
        self.assertIn("no timeline", err)  # a missing file is reported and skipped

    def test_overhead_of_a_scaling_timeline(self):
        # scaling.sh's names: timeline<label less "pipevd">.json.
        with tempfile.TemporaryDirectory() as tmp:
            timeline = os.path.join(tmp, "timeline_1gpu_n2000.json")
            with open(timeline, "w") as f:
                f.write(read(TIMELINE))
            runs = os.path.join(tmp, "runs.jsonl")
            with open(runs, "w") as f:
                f.write('{"label":"pipevd_1gpu_n2000","call":"first","solver":"pipevd","ranks":1,'
                        '"gpus":1,"n":2000,"jobz":"V","repeat":0,"status":"ok","time_s":0.06}\n')
            rc, out, err = report("--overhead", timeline, runs)
            self.assertEqual(rc, 0, err)
            self.assertEqual(row(out, "1gpu")[3:8], ["0.06", "-", "0.024", "0.036", "60%"])

    def test_device_stages_can_be_named(self):
        rc, out, err = report("--overhead", TIMELINE, os.path.join(DATA, "overhead.jsonl"),
                              "--device-stages", "solve")
        self.assertEqual(rc, 0, err)
        self.assertEqual(row(out, "pipevd_auto_1gpu_8callers_V_timeline")[3:7],
                         ["0.055", "-", "0.02", "0.035"])

    def test_plot_and_tables_without_matplotlib(self):
        with tempfile.TemporaryDirectory() as tmp:
            png = os.path.join(tmp, "sizes.png")
            try:
                import matplotlib  # noqa: F401
                rc, out, err = report(os.path.join(DATA, "runs.jsonl"), "--plot", png)
                self.assertEqual(rc, 0, err)
                with open(png, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            except ImportError:
                pass
            # A matplotlib that cannot be imported: the tables still print, the plot reports 77.
            env = without_matplotlib(tmp)
            rc, out, err = report(os.path.join(DATA, "runs.jsonl"), "--plot", png + "2", env=env)
            self.assertEqual(rc, 77, err)
            self.assertIn("| pipevd_auto |", out)
            self.assertIn("no matplotlib here", err)

    def test_speedup_plot(self):
        with tempfile.TemporaryDirectory() as tmp:
            png = os.path.join(tmp, "speedup.png")
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                matplotlib = None
            if matplotlib is not None:
                rc, out, err = report(os.path.join(DATA, "runs.jsonl"), "--speedup", png)
                self.assertEqual(rc, 0, err)
                self.assertIn("plot: " + png, out)
                with open(png, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            # Without matplotlib: the tables, then 77, and no file.
            env = without_matplotlib(tmp)
            rc, out, err = report(os.path.join(DATA, "runs.jsonl"), "--speedup", png + "2", env=env)
            self.assertEqual(rc, 77, err)
            self.assertIn("| pipevd_auto |", out)
            self.assertFalse(os.path.exists(png + "2"))


class SizesScriptTest(unittest.TestCase):
    """sizes.sh with the host engine: CALLERS, OVERHEAD, ScaLAPACK on the host's cores and the
    report, on tiny sizes."""

    def test_callers_and_overhead(self):
        build = os.environ.get("PIPEVD_BUILD_DIR")
        self.assertTrue(build, "PIPEVD_BUILD_DIR names the build")
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, OUT=tmp, BUILD_DIR=build, BACKEND="host", SIZES="64 96",
                       JOBZ="V", PATHS="auto", PEERS="scalapack", CALLERS="1 2", OVERHEAD="1",
                       FIRST="1", SCALAPACK_RANKS="2 1",
                       OVERHEAD_SIZES="96", REPEAT="3", BUDGET_S="200", CAP="60")
            p = subprocess.run(["bash", os.path.join(ROOT, "bench", "device", "sizes.sh")],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            sys.stdout.write(p.stdout[-4000:])
            self.assertEqual(p.returncode, 0)
            out = os.path.join(tmp, "sizes")
            runs = [json.loads(l) for l in read(os.path.join(out, "runs.jsonl")).splitlines()]
            ranks = {(r["label"], r["ranks"]) for r in runs}
            # pipevd with 1 and 2 caller ranks on one "GPU", ScaLAPACK on the host's cores with
            # each of SCALAPACK_RANKS. FIRST=1: each setting again as one single-call process per n.
            self.assertEqual(ranks, {("pipevd_auto_1gpu_V", 1), ("pipevd_auto_1gpu_2callers_V", 2),
                                     (host_label(2, "V"), 2), (host_label(1, "V"), 1),
                                     ("pipevd_auto_1gpu_first_V", 1),
                                     ("pipevd_auto_1gpu_2callers_first_V", 2),
                                     (host_label(2, "V", True), 2), (host_label(1, "V", True), 1)})
            self.assertEqual(len(runs), 4 * 2 * 3 + 4 * 2)
            self.assertTrue(all(r["solver"] == "scalapack" and r["gpus"] == 0
                                for r in runs if r["label"].startswith("scalapack_host")))
            self.assertTrue(all(r["call"] == "first" for r in runs if "_first_" in r["label"]))
            self.assertTrue(all(r["status"] == "ok" for r in runs))
            over = [json.loads(l) for l in read(os.path.join(out, "overhead.jsonl")).splitlines()]
            self.assertEqual({r["label"] for r in over},
                             {"pipevd_auto_1gpu_V_timeline", "pipevd_auto_1gpu_2callers_V_timeline"})
            for label in ("pipevd_auto_1gpu_V_timeline", "pipevd_auto_1gpu_2callers_V_timeline"):
                self.assertTrue(os.path.exists(os.path.join(out, "timeline_%s_n96.json" % label)))
            md = read(os.path.join(out, "report.md"))
            self.assertIn("| pipevd_auto_2callers |", md)
            self.assertNotIn("_first |", md)  # folded into their settings' rows
            # Every n's first call is a process's first call now.
            table = section(md, "### 0 GPUs")
            self.assertEqual(len(re.findall(r"\(\S+\*\)", table)), 4 * 2)
            self.assertIn("| %s |" % host_label(1, "V")[:-2], table)
            # ScaLAPACK on the host is no GPU peer: its own ratio only.
            self.assertNotIn("| ratio to the fastest peer |", md)
            ratios = table[table.index("| pipevd / ScaLAPACK(host) |"):]
            self.assertRegex(row(ratios, "pipevd_auto")[0], r"^[0-9.]+ scalapack_host\d+c")
            # Its wall time, and the same setting's median without the timeline (runs.jsonl).
            self.assertRegex(md, r"\| pipevd_auto_1gpu_2callers_V_timeline \| 96 \| \w+ \| 2 \(\d\) "
                                 r"\| [0-9.e-]+ \| [0-9.e-]+ \|")

    def test_one_stage_timeline_has_the_solver_call(self):
        # The one-stage path's solver call on the timeline (forced: at this n auto takes it on a
        # GPU only), so the overhead is the call less its upload, solve and download.
        build = os.environ.get("PIPEVD_BUILD_DIR")
        self.assertTrue(build, "PIPEVD_BUILD_DIR names the build")
        with tempfile.TemporaryDirectory() as tmp:
            timeline = os.path.join(tmp, "timeline_one_stage_n120.json")
            env = dict(os.environ, PIPEVD_BACKEND="host", PIPEVD_ENGINE_PATH="one_stage",
                       PIPEVD_VERBOSE="2", PIPEVD_TIMELINE=timeline)
            mpiexec = os.environ.get("PIPEVD_MPIEXEC", "mpiexec")
            p = subprocess.run([mpiexec, "-n", "2", "--oversubscribe",
                                os.path.join(build, "bench", "pipevd-bench"), "--solver", "pipevd",
                                "--n", "120", "--nb", "16", "--repeat", "2", "--reference", "none"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            self.assertEqual(p.returncode, 0, p.stdout)
            runs = os.path.join(tmp, "runs.jsonl")
            with open(runs, "w") as f:
                for line in p.stdout.splitlines():
                    if line.startswith('{"solver"'):
                        f.write('{"label":"one_stage",' + line[1:] + "\n")
            stages = {i["stage"] for i in json.loads(read(timeline))["intervals"]}
            self.assertTrue({"upload", "solve", "download"} <= stages, stages)
            # The route's waits over the caller ranks, named on the timeline rather than untracked.
            self.assertTrue({"failure_agreement", "w_broadcast"} <= stages, stages)
            rc, out, err = report("--overhead", timeline, runs)
            self.assertEqual(rc, 0, err)
            cells = row(out, "one_stage")
            self.assertEqual(cells[:3], ["120", "one_stage", "2 (1)"])
            wall, device, outside = (float(cells[i]) for i in (3, 5, 6))
            self.assertGreater(device, 0)
            self.assertAlmostEqual(wall - device, outside, delta=1e-3 * wall)


if __name__ == "__main__":
    unittest.main()
