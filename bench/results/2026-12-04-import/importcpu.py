# usage: importcpu.py TAG -- the server's CPU seconds and peak RSS up to the
# end of the import (the "import into" line of TAG.server.log), from TAG.mon.
import sys, datetime
tag = sys.argv[1]
end = None
for line in open(tag + ".server.log"):
    if "import into" in line:
        ts = line.split()[0].rstrip("Z")
        end = datetime.datetime.fromisoformat(ts).replace(tzinfo=datetime.timezone.utc).timestamp()
rows = []
for line in open(tag + ".mon"):
    p = line.split()
    if len(p) == 3: rows.append((float(p[0]), int(p[1]), int(p[2])))
upto = [r for r in rows if r[0] <= end + 1.0]
cpu = upto[-1][1] / 100.0
rss = max(r[2] for r in upto) / 1024
print(f"import_cpu={cpu:.1f}s import_peak_rss={rss:.0f}MB")
