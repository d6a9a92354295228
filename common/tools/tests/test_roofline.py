#!/usr/bin/env python3
"""roofline.py's GPU mode on a small fixture (no GPU needed), and its CPU mode still.

The fixture (fixtures/roofline_gpu_bench.csv) holds rows of gpu-check's bench.csv
as the H100 run gave them (step05, step06, cuBLAS at n = 1024 and 8192, with the
A^T A rows that have no model); fixtures/roofline_gpu_copy.csv is lab_gpu_copy's
CSV with a made-up rate.
"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
TOOLS = HERE.parent
ROOT = TOOLS.parents[1]
sys.path.insert(0, str(TOOLS))
import roofline  # noqa: E402

BENCH = HERE / "fixtures" / "roofline_gpu_bench.csv"
COPY = HERE / "fixtures" / "roofline_gpu_copy.csv"


def has_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def run(*args):
    return subprocess.run([sys.executable, str(TOOLS / "roofline.py"), *map(str, args)], capture_output=True,
                          text=True)


class GpuModels(unittest.TestCase):
    rows = roofline.load(BENCH)

    def test_every_gemm_kernel_of_the_bench_has_a_model(self):
        for r in self.rows:
            if r["variant"] in ("ata", "cublas_dsyrk"):  # A^T A: another product, left out
                self.assertIsNone(roofline.model(r), r["variant"])
            else:
                self.assertIsNotNone(roofline.model(r), f'{r["step"]} {r["variant"]}')
                self.assertTrue(roofline.is_gpu(r))

    def test_intensities_follow_the_tiles(self):
        self.assertAlmostEqual(roofline.tile_ai(32, 32), 4.0)          # step05's kTile
        self.assertAlmostEqual(roofline.tile_ai(128, 64), 128 * 64 / (4.0 * 192))
        self.assertEqual(roofline.dmma_tile(1024), (64, 64))            # 64 tiles < 132 SMs
        self.assertEqual(roofline.dmma_tile(2048), (128, 128))          # 256 tiles
        ai = {(r["step"], r["variant"]): roofline.model(r)[0](8192) for r in self.rows if roofline.model(r)}
        self.assertLess(ai[("step05", "naive")], ai[("step05", "tiled")])
        self.assertLess(ai[("step05", "tiled")], ai[("step06", "simt")])
        self.assertLess(ai[("step06", "simt")], ai[("step06", "dmma")])

    def test_one_point_per_variant_at_one_size(self):
        picked = roofline.pick([r for r in self.rows if roofline.model(r)], 8192)
        self.assertEqual({int(r["n"]) for r in picked}, {8192})
        cublas = [r for r in picked if r["variant"] == "cublas"]
        self.assertEqual(len(cublas), 1, "cuBLAS timed by step05 and step06 is one point")
        self.assertEqual(float(cublas[0]["gflops"]), 56100.0, "the faster of the two")
        self.assertEqual(len(picked), 6)


class Drawing(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.png = pathlib.Path(self.tmp.name) / "roofline_gpu.png"

    def tearDown(self):
        self.tmp.cleanup()

    def check_png(self, out):
        if not has_matplotlib():
            self.skipTest("matplotlib is not installed: roofline.py draws nothing (and says so)")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(self.png.read_bytes()[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(list(self.png.parent.iterdir()), [self.png], "no temporary file left behind")

    def test_gpu_mode_draws_the_fixture(self):
        self.check_png(run("--gpu", BENCH, COPY, "--png", self.png))

    def test_gpu_mode_at_a_chosen_size_and_by_itself(self):
        self.check_png(run(BENCH, COPY, "--png", self.png, "--n", 1024))

    def test_a_size_the_csv_lacks_is_refused_by_name(self):
        out = run("--gpu", BENCH, COPY, "--png", self.png, "--n", 4096)
        if not has_matplotlib():
            self.skipTest("matplotlib is not installed")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("no rows at n = 4096", out.stderr)
        self.assertFalse(self.png.exists())

    def test_gpu_mode_without_a_copy_rate_is_refused(self):
        stream = ROOT / "common" / "docs" / "results" / "epyc-2core-stream.csv"
        out = run("--gpu", BENCH, stream, "--png", self.png)
        if not has_matplotlib():
            self.skipTest("matplotlib is not installed")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("bandwidth", out.stderr)

    def test_cpu_mode_still_draws_the_ladder(self):
        res = ROOT / "common" / "docs" / "results"
        self.check_png(run(res / "epyc-2core-ladder.csv", res / "epyc-2core-stream.csv", "--png", self.png))


if __name__ == "__main__":
    unittest.main()
