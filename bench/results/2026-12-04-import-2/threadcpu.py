# usage: threadcpu.py TAG STOREDIR -- from TAG.mon, TAG.threads (load.sh),
# TAG.server.log and the store's LOG: the import's CPU seconds and peak
# RSS, its apply phase (start to the first merge) and closing merge, the
# cores each kept busy (CPU seconds / wall seconds), and the CPU of each
# kind of thread up to the import's end. Old builds name no import
# thread: their busiest unnamed thread is the transactor's ("mentat-tx"),
# the other unnamed ones are chunk writers and merge helpers.
import sys, datetime, re, glob, collections
tag, store = sys.argv[1], sys.argv[2]
HZ = 100.0
def ts(s):
    return datetime.datetime.fromisoformat(s).replace(tzinfo=datetime.timezone.utc).timestamp()
end = dur = None
for line in open(tag + ".server.log"):
    m = re.search(r"^(\S+)Z .*import into .* in (\d+) ms", line)
    if m: end, dur = ts(m.group(1)), int(m.group(2)) / 1000.0
start = end - dur
merge_start = end
for f in glob.glob(store + "/*/LOG"):
    for line in open(f):
        m = re.search(r"^(\d+)/(\d+)/(\d+)-(\S+) .*import: merged .* in ([0-9.]+) s", line)
        if m:
            t = ts(f"{m.group(1)}-{m.group(2)}-{m.group(3)}T{m.group(4)}") - float(m.group(5))
            merge_start = min(merge_start, t)
mon = [tuple(map(float, l.split())) for l in open(tag + ".mon") if len(l.split()) == 3]
def proc_at(t):
    best = mon[0]
    for r in mon:
        if r[0] <= t: best = r
    return best
samples = collections.defaultdict(list)  # tid -> [(t, ticks)]
names = {}
for l in open(tag + ".threads"):
    p = l.split()
    if len(p) != 4: continue
    samples[p[1]].append((float(p[0]), int(p[3]))); names[p[1]] = p[2]
def thread_at(tid, t):
    v = 0
    for (s, k) in samples[tid]:
        if s <= t: v = k
    return v
# the transactor in builds that do not name it
unnamed = [tid for tid in samples if names[tid] == "mentatd"]
if unnamed and "mentat-tx" not in names.values():
    tx = max(unnamed, key=lambda tid: thread_at(tid, end))
    names[tx] = "mentat-tx"
    for tid in unnamed:
        if tid != tx and thread_at(tid, end) > 50: names[tid] = "unnamed(writer,merge)"
def window(a, b):
    return (proc_at(b)[1] - proc_at(a)[1]) / HZ, proc_at(b)[0] - proc_at(a)[0]
imp_cpu = proc_at(end + 0.6)[1] / HZ
rss = max(r[2] for r in mon if r[0] <= end + 0.6) / 1024
a_cpu, a_wall = window(start, merge_start)
m_cpu, m_wall = window(merge_start, end)
print(f"{tag}: import {dur:.1f} s, {9786833/dur:,.0f} datoms/s, CPU {imp_cpu:.1f} s, peak RSS {rss:.0f} MB")
print(f"  apply {merge_start-start:.1f} s: CPU {a_cpu:.1f} s, cores {a_cpu/max(a_wall,1e-9):.2f};"
      f" merge {end-merge_start:.1f} s: CPU {m_cpu:.1f} s, cores {m_cpu/max(m_wall,1e-9):.2f}")
by = collections.Counter()
by_apply = collections.Counter()
for tid in samples:
    by[names[tid]] += thread_at(tid, end + 0.6) / HZ
    by_apply[names[tid]] += thread_at(tid, merge_start) / HZ
print("  per thread kind (to the import's end / in the apply phase), s: " + ", ".join(
    f"{k} {v:.1f}/{by_apply[k]:.1f}" for k, v in by.most_common() if v >= 0.3))
try:
    io = [l.split() for l in open(tag + ".io")]
    io = [(float(p[0]), [int(x) for x in p[1:5]]) for p in io if len(p) == 5]
    upto = [r for r in io if r[0] <= end + 0.6]
    if upto:
        r = upto[-1][1]
        print(f"  I/O to the import's end: wchar {r[1]/1e6:,.0f} MB, write_bytes {r[3]/1e6:,.0f} MB, rchar {r[0]/1e6:,.0f} MB")
except FileNotFoundError:
    pass
