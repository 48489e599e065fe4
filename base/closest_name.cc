#include "mentat/base/closest_name.h"

#include <algorithm>
#include <vector>

namespace mentat {

size_t EditDistance(std::string_view a, std::string_view b) {
  // One row of the dynamic-programming table at a time.
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

ClosestName::ClosestName(std::string_view typed)
    : typed_(typed), limit_(std::max<size_t>(2, typed.size() / 3)) {}

void ClosestName::Offer(std::string_view candidate) {
  if (typed_.empty() || candidate == typed_) return;
  // Far longer or shorter names cannot be within the limit.
  const size_t gap = candidate.size() > typed_.size()
                         ? candidate.size() - typed_.size()
                         : typed_.size() - candidate.size();
  const bool extends = candidate.size() > typed_.size() &&
                       candidate.substr(0, typed_.size()) == typed_;
  if (gap > limit_ && !extends) return;
  const size_t d = extends ? 1 : EditDistance(typed_, candidate);
  if (d <= limit_ && (best_.empty() || d < best_distance_ ||
                      (d == best_distance_ && candidate < best_))) {
    best_ = candidate;
    best_distance_ = d;
  }
}

}  // namespace mentat
