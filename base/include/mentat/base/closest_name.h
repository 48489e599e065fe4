#ifndef MENTAT_BASE_CLOSEST_NAME_H_
#define MENTAT_BASE_CLOSEST_NAME_H_

// "Did you mean ...?": the name among candidates closest to one a user
// typed, for error messages (an unknown attribute in a query, an unknown
// shell command).

#include <cstddef>
#include <string_view>

namespace mentat {

// Levenshtein distance: the fewest single-character insertions, deletions
// and substitutions that turn `a` into `b`.
size_t EditDistance(std::string_view a, std::string_view b);

// Keeps the candidate closest to `typed`: Offer each one, then best() is
// the closest within the distance a typo plausibly spans (2, or a third of
// the typed name's length when that is larger), the one that sorts first
// on a tie (so the answer does not depend on the order candidates come
// in, a hash map's), or empty. A candidate that extends what was typed (a
// prefix) counts as distance 1. Not thread-safe; best() views a candidate the
// caller keeps alive.
class ClosestName {
 public:
  explicit ClosestName(std::string_view typed);

  void Offer(std::string_view candidate);
  std::string_view best() const { return best_; }

 private:
  std::string_view typed_;
  size_t limit_;
  std::string_view best_;
  size_t best_distance_ = 0;
};

}  // namespace mentat

#endif  // MENTAT_BASE_CLOSEST_NAME_H_
