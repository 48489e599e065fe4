#!/usr/bin/env python3
# usage: firstrow.py CMD... : runs CMD, prints seconds to its first output line, total seconds and lines
import subprocess, sys, time
t0 = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, bufsize=1 << 16)
first = None
n = 0
for line in p.stdout:
    if first is None:
        first = time.monotonic() - t0
    n += 1
rc = p.wait()
print(f"first_line_s={first:.4f} total_s={time.monotonic() - t0:.3f} lines={n} rc={rc}")
