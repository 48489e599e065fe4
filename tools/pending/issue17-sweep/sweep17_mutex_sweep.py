import re, subprocess, sys
files = subprocess.check_output(['git','ls-files','*.h','*.cc'], text=True).split()
for f in files:
    s = open(f).read()
    if not re.search(r'std::(mutex|condition_variable|lock_guard)\b', s):
        continue
    o = s
    s = re.sub(r'std::lock_guard<std::mutex>\s+(\w+)\(([^;]*?)\);',
               lambda m: f'absl::MutexLock {m.group(1)}(&{m.group(2)});', s)
    s = re.sub(r'\bstd::mutex\b', 'absl::Mutex', s)
    s = re.sub(r'\bstd::condition_variable\b', 'absl::CondVar', s)
    s = re.sub(r'\.notify_one\(\)', '.Signal()', s)
    s = re.sub(r'\.notify_all\(\)', '.SignalAll()', s)
    s = re.sub(r'#include <condition_variable>\n', '', s)
    if not re.search(r'std::(call_once|once_flag|unique_lock|scoped_lock|lock\b|try_to_lock|defer_lock)', s):
        s = re.sub(r'#include <mutex>\n', '', s)
    if 'absl/synchronization/mutex.h' not in s:
        # after the last #include "absl/..." or before the first #include "mentat/ or "internal/
        lines = s.split('\n')
        idx = None
        for i, l in enumerate(lines):
            if l.startswith('#include "'):
                if idx is None: idx = i
                if l < '#include "absl/synchronization/mutex.h"':
                    idx = i + 1
        if idx is None:
            for i, l in enumerate(lines):
                if l.startswith('#include'): idx = i + 1
        lines.insert(idx, '#include "absl/synchronization/mutex.h"')
        s = '\n'.join(lines)
    if s != o:
        open(f, 'w').write(s)
        print(f)
