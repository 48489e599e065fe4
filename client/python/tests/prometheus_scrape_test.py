"""mentatd scraped by a real Prometheus: starts mentatd with --http on an
ephemeral port, checks /metrics with `promtool check metrics`, makes a few
RPCs through mentat_client, runs prometheus (its own config, TSDB and
listen address in a temporary directory: the Debian package's service is
not used) scraping every second, waits until the target is up, and reads
`up` and mentatd's RPC counters back through Prometheus's HTTP API.

Exit code 77 (CTest SKIP_RETURN_CODE) when prometheus is not installed.
Run by CTest: prometheus_scrape_test.py --mentatd PATH."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mentatd  # noqa: E402
from mentat_client import Client  # noqa: E402

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
SHIPPED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "..", "deploy", "prometheus")
# mentatd's default --http address, which the shipped config scrapes.
DEFAULT_HTTP = "127.0.0.1:7879"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"


def ready(addr):
    with Client(addr, timeout=5) as c:
        c.databases()
    return True


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode("utf-8")


class PrometheusScrapeTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.server = mentatd.Mentatd(http=True).start(ready)
        cls.tmp = tempfile.mkdtemp(prefix="mentat-prometheus-")
        cls.prom = None

    @classmethod
    def tearDownClass(cls):
        if cls.prom is not None and cls.prom.poll() is None:
            cls.prom.send_signal(signal.SIGTERM)
            try:
                cls.prom.wait(timeout=20)
            except subprocess.TimeoutExpired:
                cls.prom.kill()
                cls.prom.wait()
        cls.server.cleanup()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def metrics_text(self):
        return http_get("http://%s/metrics" % self.server.http_addr)

    def test_1_promtool_accepts_metrics(self):
        with Client(self.server.addr, timeout=10) as c:
            c.transact("[]")
            # A small query is one QueryFirst call; datoms is a stream.
            list(c.query("[:find ?e :where [?e :db/ident :db/ident]]"))
            list(c.datoms("aevt", ":db/ident"))
        # A stream is counted when gRPC reports it done, which can come
        # after the client has read its end: wait for it to be counted.
        datoms_handled = (r'grpc_server_handled_total\{grpc_service='
                          r'"mentat.v1.Mentat",grpc_method="Datoms",'
                          r'grpc_type="server_stream",grpc_code="OK"\} [1-9]')
        self.assertTrue(
            self.wait_for(
                lambda: re.search(datoms_handled, self.metrics_text()), 30),
            "the Datoms stream was never counted")
        text = self.metrics_text()
        self.assertIn("mentat_rpc_requests_total", text)
        # The names dashboards for any gRPC server or process look for.
        self.assertRegex(text, r'grpc_server_handled_total\{grpc_service='
                         r'"mentat.v1.Mentat",grpc_method="QueryFirst",'
                         r'grpc_type="unary",grpc_code="OK"\} [1-9]')
        self.assertRegex(text, r'grpc_server_handled_total\{grpc_service='
                         r'"mentat.v1.Mentat",grpc_method="Datoms",'
                         r'grpc_type="server_stream",grpc_code="OK"\} [1-9]')
        self.assertIn('grpc_server_handling_seconds_bucket{grpc_service='
                      '"mentat.v1.Mentat",grpc_method="Transact",'
                      'grpc_type="unary",le="+Inf"}', text)
        for name in ("process_cpu_seconds_total",
                     "process_resident_memory_bytes",
                     "process_virtual_memory_bytes", "process_open_fds",
                     "process_max_fds", "process_start_time_seconds"):
            self.assertRegex(text, "\n" + name + " [0-9]")
        self.assertRegex(text, r'mentatd_build_info\{version="[0-9.]+",'
                         r'compiler="[^"]+"\} 1')
        r = subprocess.run([PROMTOOL, "check", "metrics"], input=text,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0,
                         "promtool check metrics:\n" + r.stdout + r.stderr)
        self.assertEqual(r.stdout.strip() + r.stderr.strip(), "",
                         "promtool has remarks")

    def test_2_prometheus_scrapes(self):
        with Client(self.server.addr, timeout=10) as c:
            for _ in range(3):
                c.transact("[]")
        # The shipped configuration, with only the target's port (the test's
        # mentatd listens on a free one) and the intervals (15 s would
        # make this test slow) changed; its alert rules come along.
        with open(os.path.join(SHIPPED, "prometheus.yml")) as f:
            text = f.read()
        shipped_target = 'targets: ["%s"]' % DEFAULT_HTTP
        self.assertIn(shipped_target, text)
        text = text.replace(shipped_target,
                            'targets: ["%s"]' % self.server.http_addr)
        self.assertIn("scrape_interval: 15s", text)
        text = text.replace("scrape_interval: 15s", "scrape_interval: 1s")
        text = text.replace("evaluation_interval: 15s",
                            "evaluation_interval: 1s")
        config = os.path.join(self.tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write(text)
        shutil.copy(os.path.join(SHIPPED, "mentatd-alerts.yml"), self.tmp)
        r = subprocess.run([PROMTOOL, "check", "config", config],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0,
                         "promtool check config:\n" + r.stdout + r.stderr)
        log = open(os.path.join(self.tmp, "prometheus.log"), "wb")
        self.addCleanup(log.close)
        for _ in range(5):
            port = mentatd.free_port()
            web = "127.0.0.1:%d" % port
            cls = type(self)
            cls.prom = subprocess.Popen(
                [PROMETHEUS, "--config.file=" + config,
                 "--storage.tsdb.path=" + os.path.join(self.tmp, "tsdb"),
                 "--web.listen-address=" + web, "--log.level=warn"],
                stdout=log, stderr=subprocess.STDOUT, cwd=self.tmp)
            if self.wait_for(lambda: http_get("http://%s/-/ready" % web), 30,
                             stop_if_dead=True):
                break
            if cls.prom.poll() is None:
                cls.prom.kill()
            cls.prom.wait()
        else:
            self.fail("prometheus did not start; log in " + self.tmp)

        def query(expr):
            url = "http://%s/api/v1/query?%s" % (
                web, urllib.parse.urlencode({"query": expr}))
            body = json.loads(http_get(url))
            self.assertEqual(body["status"], "success", body)
            return body["data"]["result"]

        def up():
            result = query('up{job="mentatd"}')
            return result and result[0]["value"][1] == "1"

        self.assertTrue(self.wait_for(up, 60), "the target never came up")
        expr = ('sum(mentat_rpc_requests_total{method="Transact",'
                'code="OK"})')
        self.assertTrue(
            self.wait_for(lambda: query(expr) and
                          float(query(expr)[0]["value"][1]) >= 3, 30),
            "Transact count not scraped: %s" % query(expr))
        # A histogram Prometheus can compute a quantile of.
        q = query('histogram_quantile(0.5, sum by (le) '
                  '(mentat_rpc_duration_seconds_bucket{method="Transact"}))')
        self.assertTrue(q, "no latency histogram")
        targets = json.loads(http_get("http://%s/api/v1/targets" % web))
        # The shipped config also scrapes a node exporter, not running here.
        health = [t["health"] for t in targets["data"]["activeTargets"]
                  if t["labels"]["job"] == "mentatd"]
        self.assertEqual(health, ["up"])

    def test_0_shipped_config_scrapes_the_default_address(self):
        # A mentatd started with no --http serves metrics where the shipped
        # Prometheus config looks for them.
        r = subprocess.run([mentatd.ARGS.mentatd, "--help"],
                           capture_output=True, text=True, timeout=60)
        help_text = r.stdout + r.stderr
        self.assertRegex(help_text, r"--http[^\n]*\n?[^\n]*" +
                         DEFAULT_HTTP.replace(".", r"\."))
        with open(os.path.join(SHIPPED, "prometheus.yml")) as f:
            self.assertIn('targets: ["%s"]' % DEFAULT_HTTP, f.read())

    def wait_for(self, predicate, seconds, stop_if_dead=False):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if stop_if_dead and type(self).prom.poll() is not None:
                return False
            try:
                if predicate():
                    return True
            except (OSError, ValueError, KeyError, IndexError):
                pass
            time.sleep(0.25)
        return False


if __name__ == "__main__":
    if not (os.access(PROMETHEUS, os.X_OK) and os.access(PROMTOOL, os.X_OK)):
        print("prometheus or promtool not installed: skipped")
        sys.exit(77)
    mentatd.parse_args()
    unittest.main(verbosity=2)
