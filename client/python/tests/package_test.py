"""The package as a user gets it, and its type hints.

1. `pip install` of a copy of client/python (Debian's pip, setuptools from
   python3-setuptools, --no-build-isolation because CI reaches no PyPI)
   into a temporary directory; that copy imported from outside the
   repository (no build tree, no proto/ beside it) pings a live mentatd.
2. `python3 -m mypy` over mentat_client (Debian's mypy), strict about
   untyped definitions.

Each part is skipped when its tool is missing (pip, mypy); with both
missing the test exits 77 (skipped). Run by CTest: package_test.py
--mentatd PATH."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.normpath(os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import mentatd  # noqa: E402


def has_module(name):
    return subprocess.run([sys.executable, "-c", "import " + name],
                          capture_output=True).returncode == 0


HAS_PIP = has_module("pip") and has_module("setuptools")
HAS_MYPY = has_module("mypy")


class PackageTest(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="mentat-py-pkg-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    @unittest.skipUnless(HAS_PIP, "pip or setuptools is not installed")
    def test_pip_install_and_use(self):
        # A copy: pip builds in the source tree and leaves build/ there.
        src = os.path.join(self.tmp, "src")
        shutil.copytree(PACKAGE, src, ignore=shutil.ignore_patterns(
            "__pycache__", "build", "*.egg-info", "tests"))
        target = os.path.join(self.tmp, "site")
        r = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet",
             "--disable-pip-version-check", "--no-build-isolation",
             "--no-deps", "--no-index", "--target", target, src],
            capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(os.path.isfile(os.path.join(
            target, "mentat_client", "_pb", "mentat_pb2.py")))
        self.assertTrue(os.path.isfile(os.path.join(
            target, "mentat_client", "py.typed")))

        server = mentatd.Mentatd()
        self.addCleanup(server.cleanup)
        script = (
            "import sys, mentat_client, mentat_client.aio\n"
            "assert mentat_client.__file__.startswith(sys.argv[2]), "
            "mentat_client.__file__\n"
            "with mentat_client.Client(sys.argv[1], timeout=10) as c:\n"
            "    c.ping()\n"
            "    r = c.transact([{':db/ident': mentat_client.kw(':a/b'),"
            " ':db/valueType': mentat_client.kw(':db.type/string'),"
            " ':db/cardinality': mentat_client.kw(':db.cardinality/one')}])\n"
            "    print('installed ok', r.datom_count)\n")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONPATH"] = target
        env["PYTHONDONTWRITEBYTECODE"] = "1"

        def ready(addr):
            r = subprocess.run([sys.executable, "-c", script, addr, target],
                               cwd=self.tmp, env=env, capture_output=True,
                               text=True)
            self.last = r
            return r.returncode == 0
        self.last = None
        try:
            server.start(ready)
        except RuntimeError:
            self.fail("the installed package failed: %s" %
                      (self.last.stderr if self.last else "no run"))
        self.assertIn("installed ok", self.last.stdout)

    @unittest.skipUnless(HAS_MYPY, "mypy is not installed (apt-get install "
                         "mypy)")
    def test_type_hints_check(self):
        r = subprocess.run(
            [sys.executable, "-m", "mypy", "--cache-dir",
             os.path.join(self.tmp, "mypy-cache"), "--config-file",
             os.path.join(PACKAGE, "pyproject.toml"), "mentat_client"],
            cwd=PACKAGE, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    mentatd.parse_args()
    if not HAS_PIP and not HAS_MYPY:
        print("package_test: neither pip nor mypy is installed: skipped")
        sys.exit(77)
    unittest.main(verbosity=2)
