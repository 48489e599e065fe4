// Measures the EDN reader (and, for reference, the printer and the tx-data
// parser) on typical tx-data: one transaction map per line, as the import
// path sees it.
//
//   edn-parse-bench [megabytes=50] [repetitions=5]
//
// Reports figures only; it never asserts a timing.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "mentat/edn/edn_printer.h"
#include "mentat/edn/edn_reader.h"
#include "mentat/query/tx_data_parser.h"

namespace {

using Clock = std::chrono::steady_clock;

// One line of tx-data in the shape of the issue tracker workload.
void AppendIssue(std::mt19937_64& rng, int64_t id, std::string* out) {
  static constexpr const char* kStates[] = {"open", "in-progress", "closed",
                                            "wont-fix"};
  static constexpr const char* kWords[] = {
      "crash",  "slow",   "login",    "timeout", "memory", "leak",
      "button", "render", "overflow", "export",  "sync",   "flaky"};
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  char buf[128];
  out->append("{:db/id \"i");
  out->append(std::to_string(id));
  out->append("\" :issue/title \"Issue ");
  out->append(std::to_string(id));
  out->append(": ");
  out->append(kWords[pick(12)]);
  if (pick(2)) {
    out->push_back(' ');
    out->append(kWords[pick(12)]);
  }
  out->append("\" :issue/state :state/");
  out->append(kStates[pick(4)]);
  out->append(" :issue/priority ");
  out->append(std::to_string(pick(5) + 1));
  out->append(" :issue/assignee [:user/email \"user");
  out->append(std::to_string(pick(1000)));
  out->append("@example.com\"] :issue/created-at #inst \"");
  std::snprintf(buf, sizeof buf, "20%02d-%02d-%02dT%02d:%02d:%02dZ",
                20 + pick(6), 1 + pick(12), 1 + pick(28), pick(24), pick(60),
                pick(60));
  out->append(buf);
  out->append("\" :issue/label [");
  const int labels = 1 + pick(3);
  for (int i = 0; i < labels; ++i) {
    if (i > 0) out->push_back(' ');
    out->append("\"l");
    out->append(std::to_string(pick(20)));
    out->push_back('"');
  }
  out->append("]}\n");
}

std::string Generate(size_t bytes, size_t* forms) {
  std::mt19937_64 rng(42);
  std::string text;
  text.reserve(bytes + 512);
  *forms = 0;
  for (int64_t id = 0; text.size() < bytes; ++id) {
    AppendIssue(rng, id, &text);
    ++*forms;
  }
  return text;
}

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void Report(const char* what, const std::vector<double>& seconds, size_t bytes,
            size_t forms) {
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const double best = sorted.front();
  const double median = sorted[sorted.size() / 2];
  std::printf(
      "%-34s best %8.1f MB/s  median %8.1f MB/s  %7.0f ns/form  "
      "(%zu runs)\n",
      what, bytes / best / 1e6, bytes / median / 1e6, best * 1e9 / forms,
      seconds.size());
}

}  // namespace

int main(int argc, char** argv) {
  const size_t megabytes = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 50;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 5;
  size_t forms = 0;
  const std::string text = Generate(megabytes * 1000 * 1000, &forms);
  std::printf("tx-data: %.1f MB, %zu forms, %.0f bytes/form\n",
              text.size() / 1e6, forms,
              static_cast<double>(text.size()) / forms);

  // Streaming: read a form, drop it, read the next (the import path).
  std::vector<double> stream_times;
  size_t checksum = 0;
  for (int rep = 0; rep < repetitions; ++rep) {
    const Clock::time_point start = Clock::now();
    mentat::edn::EdnReader reader(text);
    mentat::edn::EdnValue form;
    size_t n = 0;
    for (;;) {
      absl::StatusOr<bool> more = reader.Next(&form);
      if (!more.ok()) {
        std::fprintf(stderr, "parse error: %s\n",
                     more.status().ToString().c_str());
        return 1;
      }
      if (!*more) break;
      checksum += form.items().size();
      ++n;
    }
    stream_times.push_back(Seconds(start));
    if (n != forms) {
      std::fprintf(stderr, "read %zu forms, expected %zu\n", n, forms);
      return 1;
    }
  }
  Report("EdnReader::Next (stream)", stream_times, text.size(), forms);

  // Whole text at once: every form kept alive until the end.
  std::vector<double> all_times;
  for (int rep = 0; rep < repetitions; ++rep) {
    const Clock::time_point start = Clock::now();
    absl::StatusOr<std::vector<mentat::edn::EdnValue>> all =
        mentat::edn::ParseEdnAll(text);
    if (!all.ok() || all->size() != forms) return 1;
    checksum += all->size();
    all_times.push_back(Seconds(start));
  }
  Report("ParseEdnAll (kept, then freed)", all_times, text.size(), forms);

  // Printer and tx-data parser on a slice, for reference.
  const size_t slice_forms = std::min<size_t>(forms, 50000);
  size_t slice_end = 0;
  for (size_t i = 0; i < slice_forms; ++i) {
    slice_end = text.find('\n', slice_end) + 1;
  }
  const std::string_view slice_text =
      std::string_view(text).substr(0, slice_end);
  absl::StatusOr<std::vector<mentat::edn::EdnValue>> slice =
      mentat::edn::ParseEdnAll(slice_text);
  if (!slice.ok()) return 1;
  std::vector<double> print_times;
  size_t printed_bytes = 0;
  for (int rep = 0; rep < repetitions; ++rep) {
    const Clock::time_point start = Clock::now();
    std::string out;
    for (const mentat::edn::EdnValue& v : *slice) {
      mentat::edn::PrintEdnTo(v, &out);
      out.push_back('\n');
    }
    print_times.push_back(Seconds(start));
    printed_bytes = out.size();
  }
  Report("PrintEdnTo", print_times, printed_bytes, slice->size());

  // One transaction of every map in the slice (7-9 ops each).
  const std::string tx_text = "[" + std::string(slice_text) + "]";
  std::vector<double> tx_times;
  size_t ops = 0;
  for (int rep = 0; rep < repetitions; ++rep) {
    const Clock::time_point start = Clock::now();
    absl::StatusOr<mentat::storage::TxRequest> tx =
        mentat::query::ParseTxData(tx_text);
    if (!tx.ok()) {
      std::fprintf(stderr, "tx-data error: %s\n",
                   tx.status().ToString().c_str());
      return 1;
    }
    ops = tx->ops.size();
    tx_times.push_back(Seconds(start));
  }
  checksum += ops;
  Report("ParseTxData (text, one big tx)", tx_times, tx_text.size(),
         slice->size());
  std::printf("  %zu ops in the transaction\n", ops);

  // One small transaction per map, from values already read (the tx-data
  // parser alone).
  std::vector<mentat::edn::EdnValue> small_txs;
  small_txs.reserve(slice->size());
  for (mentat::edn::EdnValue& v : *slice) {
    std::vector<mentat::edn::EdnValue> one;
    one.push_back(std::move(v));
    small_txs.push_back(mentat::edn::EdnValue::Vector(std::move(one)));
  }
  std::vector<double> small_times;
  for (int rep = 0; rep < repetitions; ++rep) {
    const Clock::time_point start = Clock::now();
    size_t n = 0;
    for (const mentat::edn::EdnValue& v : small_txs) {
      absl::StatusOr<mentat::storage::TxRequest> tx =
          mentat::query::ParseTxData(v);
      if (!tx.ok()) return 1;
      n += tx->ops.size();
    }
    checksum += n;
    small_times.push_back(Seconds(start));
  }
  Report("ParseTxData (EdnValue, tx per map)", small_times, slice_text.size(),
         small_txs.size());
  std::printf("(checksum %zu)\n", checksum);
  return 0;
}
