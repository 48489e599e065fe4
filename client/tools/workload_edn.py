#!/usr/bin/env python3
"""Writes the benchmark workload (../shared/workload/WORKLOAD.md: users,
labels, issues) as an EDN transaction file that mentat-cli's .import loads,
one transaction per line: the schema, users and labels in transactions of
500, then issues in transactions of 500 that name their assignee, reporter
and labels by lookup ref. The data has the workload's shape and sizes from a
fixed seed; it is not byte for byte the bench/ generator's (that one feeds
the store in-process). The history phase is left out: issues have no unique
attribute a later file line could name them by.

  workload_edn.py --scale s --schema ../shared/workload/schema.edn > s.edn
"""

import argparse
import datetime
import random
import sys

SCALES = {"xs": (200, 13000, 50), "s": (1600, 130000, 200),
          "m": (16000, 1300000, 500)}
STATES = ["open", "in-progress", "closed", "resolved", "reopened"]
WORDS = ["crash", "ui glitch", "perf regression", "typo", "feature request"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", default="s", choices=sorted(SCALES))
    parser.add_argument("--schema", required=True)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    users, issues, labels = SCALES[args.scale]
    rng = random.Random(args.seed)
    out = sys.stdout
    with open(args.schema) as f:
        schema = " ".join(line.split(";;")[0].strip() for line in f)
    out.write(schema.strip() + "\n")
    for start in range(0, users, 500):
        out.write("[" + " ".join(
            '{:user/email "user%d@example.com" :user/name "User %d"}' % (k, k)
            for k in range(start, min(users, start + 500))) + "]\n")
    out.write("[" + " ".join('{:label/name "label-%d"}' % k
                             for k in range(labels)) + "]\n")
    year = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
    minutes = 365 * 24 * 60
    for start in range(0, issues, 500):
        forms = []
        for idx in range(start, min(issues, start + 500)):
            at = year + datetime.timedelta(minutes=rng.randrange(minutes))
            label_part = ""
            picked = rng.sample(range(labels), rng.randint(0, 3))
            if picked:
                label_part = " :issue/label [%s]" % " ".join(
                    '[:label/name "label-%d"]' % k for k in picked)
            forms.append(
                '{:issue/title "Issue %d: %s" :issue/state :state/%s '
                ':issue/priority %d :issue/assignee [:user/email '
                '"user%d@example.com"] :issue/reporter [:user/email '
                '"user%d@example.com"] :issue/created-at #inst "%s"%s}'
                % (idx, rng.choice(WORDS), rng.choice(STATES),
                   rng.randint(1, 5), rng.randrange(users),
                   rng.randrange(users),
                   at.strftime("%Y-%m-%dT%H:%M:00Z"), label_part))
        out.write("[" + " ".join(forms) + "]\n")


if __name__ == "__main__":
    main()
