#!/usr/bin/env python3
"""One-off sweep (issue 17 move 4): [[nodiscard]] on declarations returning
absl::Status / absl::StatusOr. Prints what it changed and what it could not
decide (multi-line return types)."""
import re, subprocess, sys, os

files = subprocess.check_output(['git', 'ls-files', '*.h', '*.cc'], text=True).split()
files = sorted(set(f for f in files if not f.startswith('build')))

def match_type(s, i):
    # absl::Status or absl::StatusOr<...> starting at s[i]; returns end or -1
    if s.startswith('absl::StatusOr<', i):
        j = i + len('absl::StatusOr<'); depth = 1
        while j < len(s) and depth:
            if s[j] == '<': depth += 1
            elif s[j] == '>': depth -= 1
            j += 1
        return j if depth == 0 else -2  # -2: spans lines
    if s.startswith('absl::Status', i) and not re.match(r'absl::Status\w', s[i:]):
        return i + len('absl::Status')
    return -1

decl_re = re.compile(r'^(\s*)((?:(?:static|inline|virtual|constexpr|explicit)\s+)*)')
name_re = re.compile(r'\s+((?:[A-Za-z_]\w*::)*(?:operator\S*?|~?[A-Za-z_]\w*))\s*\(')

def scan(path):
    out = []
    lines = open(path).read().split('\n')
    anon = False
    in_block_comment = False
    for n, line in enumerate(lines):
        st = line.strip()
        if path.endswith('.cc'):
            if re.match(r'^namespace\s*\{', line): anon = True
            elif re.match(r'^\}\s*//\s*namespace\s*$', line): anon = False
        if st.startswith('//') or st.startswith('*'):
            continue
        had = '[[nodiscard]]' in line
        if had:
            line = line.replace('[[nodiscard]] ', '', 1)
        m = decl_re.match(line)
        i = m.end()
        e = match_type(line, i)
        if e == -1: continue
        if e == -2:
            out.append((n, 'MULTI', None, m, anon)); continue
        rest = line[e:]
        if rest.strip() == '':
            out.append((n, 'ALONE', None, m, anon)); continue
        nm = name_re.match(rest)
        if not nm: continue
        out.append((n, 'HAS' if had else 'DECL', nm.group(1), m, anon))
    return lines, out

header_names = set()
results = {}
for f in files:
    lines, out = scan(f)
    results[f] = (lines, out)
    if f.endswith('.h'):
        for n, kind, name, m, anon in out:
            if kind in ('DECL', 'HAS') and '::' not in name:
                header_names.add(name)

changed = 0
for f in files:
    lines, out = results[f]
    mod = False
    for n, kind, name, m, anon in out:
        if kind == 'HAS':
            continue
        if kind != 'DECL':
            print(f'{f}:{n+1}: {kind}: {lines[n].strip()}', file=sys.stderr)
            continue
        if '::' in name:
            continue  # out-of-line member definition; the class says it
        if f.endswith('.cc'):
            indent = len(m.group(1))
            static = 'static' in m.group(2)
            if not (anon or static or indent > 0 or name not in header_names):
                continue  # defines a function a header declares
        indent = m.group(1)
        lines[n] = indent + '[[nodiscard]] ' + lines[n][len(indent):]
        changed += 1; mod = True
        print(f'{f}:{n+1}: {lines[n].strip()}')
    if mod:
        open(f, 'w').write('\n'.join(lines))
print('changed', changed, file=sys.stderr)
