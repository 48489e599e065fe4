"""The C++ client as another project uses it: `cmake --install` of this
build into a temporary prefix, then client/tests/find_package (a project of
its own: find_package(mentat), mentat::client) configured and built against
that prefix alone, and its program run against the installed mentatd.

Run by CTest: find_package_test.py --build-dir DIR --work-dir DIR
[--generator NAME]. The consumer is built under --work-dir (inside the
build directory, where ccache hits)."""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ARGS = None


def run(*cmd, **kw):
    r = subprocess.run(list(cmd), capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s%s" % (
            " ".join(cmd), r.returncode, r.stdout[-4000:], r.stderr[-4000:]))
    return r


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FindPackageTest(unittest.TestCase):

    def test_install_then_find_package(self):
        work = ARGS.work_dir
        shutil.rmtree(work, ignore_errors=True)
        prefix = os.path.join(work, "prefix")
        run("cmake", "--install", ARGS.build_dir, "--prefix", prefix)
        for path in ("include/mentat/client/client.h",
                     "include/mentat/v1/mentat.grpc.pb.h",
                     "lib/cmake/mentat/mentatConfig.cmake",
                     "share/mentat/proto/mentat/v1/mentat.proto",
                     "bin/mentatd", "bin/mentat-cli"):
            self.assertTrue(os.path.exists(os.path.join(prefix, path)), path)

        build = os.path.join(work, "consumer")
        configure = ["cmake", "-S", os.path.join(HERE, "find_package"),
                     "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                     "-DCMAKE_PREFIX_PATH=" + prefix]
        if ARGS.generator:
            configure += ["-G", ARGS.generator]
        run(*configure)
        run("cmake", "--build", build, "-j2")
        consumer = os.path.join(build, "consumer")

        data = os.path.join(work, "data")
        log = open(os.path.join(work, "mentatd.log"), "ab")
        self.addCleanup(log.close)
        for _ in range(5):
            addr = "127.0.0.1:%d" % free_port()
            proc = subprocess.Popen(
                [os.path.join(prefix, "bin", "mentatd"), "--data-dir=" + data,
                 "--listen=" + addr, "--http=", "--readers-per-node=2"],
                stdout=log, stderr=subprocess.STDOUT)
            try:
                deadline = time.time() + 30
                while time.time() < deadline and proc.poll() is None:
                    r = subprocess.run([consumer, addr], capture_output=True,
                                       text=True)
                    if r.returncode == 0:
                        self.assertRegex(
                            r.stdout, r"^mentatd \S+; :app/name is entity "
                            r"\d+\n$")
                        return
                    if "UNAVAILABLE" not in r.stderr:
                        self.fail("consumer: " + r.stderr)
                    time.sleep(0.1)  # not listening yet
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=15)
        self.fail("the installed mentatd did not answer; log in " + work)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--generator")
    ARGS, rest = parser.parse_known_args()
    sys.argv = [sys.argv[0]] + rest
    unittest.main(verbosity=2)
