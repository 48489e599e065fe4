# usage: perf script -F tid,ip,sym --no-demangle > S; classify.py S HZ [x: top self symbols]
# Server CPU by what each sample's stack was doing (first matching category).
import sys, collections
# categories by first matching (innermost-to-outermost search of frames for markers, checked in priority order)
cats = [
 ("merge (CompactFiles)", ["CompactImportedFamilies", "CompactFamily", "CompactFilesImpl"]),
 ("bg compaction", ["BGWorkCompaction"]),
 ("column build", ["ColumnWorker"]),
 ("writer: sort (SortedKeys/SortedByKey)", ["SortedByKey", "SortedKeys"]),
 ("writer: SST build (SstRun)", ["SstRun"]),
 ("writer: distinct/summary", ["ImportDistinct", "Summarize"]),
 ("writer: ingest", ["IngestExternalFilesE", "IngestExternalFileJob"]),
 ("writer: WriteCfFiles' own loops (reading keys in order)", ["WriteAndIngest"]),
 ("parse: ParseTxData", ["ParseTxData"]),
 ("parse: gRPC/proto/queue", ["ParseAndQueue", "ImportReactor", "ParseRequest"]),
 ("tx: ResolveOps", ["ResolveOps", "ResolveTempIds"]),
 ("tx: BuildDatoms", ["BuildDatoms"]),
 ("tx: WriteDatoms", ["WriteDatoms"]),
 ("tx: CheckUniqueness", ["CheckUniqueness"]),
 ("tx: ComputeStats", ["ComputeStats"]),
 ("tx: ~TxApplier/other Apply", ["TxApplier"]),
 ("tx: wait/finish chunk", ["FinishIngest", "StartIngest"]),
 ("tx: ImportOnThread other", ["ImportOnThread"]),
 ("grpc", ["grpc"]),
]
counts = collections.Counter(); selfc = collections.defaultdict(collections.Counter)
stack = []
def flush():
    if not stack: return
    joined = " ".join(stack)
    c = "other"
    for name, marks in cats:
        if any(m in joined for m in marks): c = name; break
    counts[c] += 1
    selfc[c][stack[0][:90]] += 1
for line in open(sys.argv[1]):
    if not line.startswith("\t"):
        flush(); stack = []; continue
    parts = line.split(None, 1)
    stack.append(parts[1].strip() if len(parts) > 1 else "?")
flush()
tot = sum(counts.values())
hz = float(sys.argv[2]) if len(sys.argv) > 2 else 49
for c, n in counts.most_common():
    print(f"{c:45s} {n:6d} {100*n/tot:5.1f}% {n/hz:6.1f}s")
    if len(sys.argv) > 3:
        for s, k in selfc[c].most_common(6): print(f"      {k:5d} {s}")
print("total", tot, tot/hz)
