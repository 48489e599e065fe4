#!/bin/bash
# per-window import rate and server CPU seconds per million datoms from mon.sh output; $2 = lines per window
awk -v W=${2:-10} '{for(i=2;i<=NF;i++){split($i,kv,"=");v[kv[1]]=kv[2]} split($1,t,":"); s=t[1]*3600+t[2]*60+t[3];
 if (NR==1||(NR-1)%W==0){ if (NR>1 && v["datoms"]>pd) printf "%s-%s load %s datoms %.1fM->%.1fM rate %.0fK/s cpu %.1f s/Mdatom rss %d MB\n",pt,$1,v["load"],pd/1e6,v["datoms"]/1e6,(v["datoms"]-pd)/(s-ps)/1000,(v["cpu"]-pc)/((v["datoms"]-pd)/1e6),v["rss"]/1024; pd=v["datoms"];ps=s;pc=v["cpu"];pt=$1}}' $1
