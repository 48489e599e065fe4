import os,re,sys,collections
# cfsizes.py STORE_DIR DATOMS: bytes of each column family's table files (the family named in each file's properties block), per datom.
d=sys.argv[1]; datoms=int(sys.argv[2])
sz=collections.Counter(); n=collections.Counter()
for f in os.listdir(d):
    if not f.endswith('.sst'): continue
    p=os.path.join(d,f); s=os.path.getsize(p)
    with open(p,'rb') as fh:
        fh.seek(max(0,s-65536)); t=fh.read()
    m=re.search(rb'column\.family\.id.{1,6}?name([a-z_0-9]+)',t,re.S)
    cf=m.group(1).decode() if m else '?'
    sz[cf]+=s; n[cf]+=1
tot=sum(sz.values())
for k,v in sz.most_common(): print(f"{k:12s} {n[k]:5d} files {v/1e6:9.1f} MB  {v/datoms:6.2f} B/datom")
print('total', round(tot/1e6,1), 'MB', round(tot/datoms,2), 'B/datom')
