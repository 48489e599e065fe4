#include "mentat/edn/edn_inst.h"

#include <cstdio>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "mentat/base/str_cat.h"

namespace mentat::edn {
namespace {

constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kSecondsPerDay = 86400;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

bool IsLeapYear(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int DaysInMonth(int64_t year, int month) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30,
                                    31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

// Days from 1970-01-01 to the given proleptic Gregorian date. The calendar
// repeats every 400 years (146097 days); counting years from March puts the
// leap day at the end of each year, which makes the day of the year a
// linear function of the month.
int64_t DaysFromCivil(int64_t y, int m, int d) {
  if (m <= 2) --y;
  const int64_t era = FloorDiv(y, 400);
  const int64_t year_of_era = y - era * 400;               // [0, 399]
  const int64_t month_from_march = m > 2 ? m - 3 : m + 9;  // [0, 11]
  const int64_t day_of_year = (153 * month_from_march + 2) / 5 + d - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 -
                             year_of_era / 100 + day_of_year;  // [0, 146096]
  return era * 146097 + day_of_era - 719468;
}

// The inverse of DaysFromCivil.
void CivilFromDays(int64_t days, int64_t* y, int* m, int* d) {
  days += 719468;
  const int64_t era = FloorDiv(days, 146097);
  const int64_t day_of_era = days - era * 146097;
  const int64_t year_of_era = (day_of_era - day_of_era / 1460 +
                               day_of_era / 36524 - day_of_era / 146096) /
                              365;
  const int64_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t month_from_march = (5 * day_of_year + 2) / 153;
  *d = static_cast<int>(day_of_year - (153 * month_from_march + 2) / 5 + 1);
  *m = static_cast<int>(month_from_march < 10 ? month_from_march + 3
                                              : month_from_march - 9);
  *y = year_of_era + era * 400 + (*m <= 2 ? 1 : 0);
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class InstantScanner {
 public:
  explicit InstantScanner(std::string_view text) : s_(text) {}

  bool AtEnd() const { return i_ >= s_.size(); }
  bool Peek(char c) const { return i_ < s_.size() && s_[i_] == c; }
  bool PeekAny(std::string_view chars) const {
    return i_ < s_.size() && chars.find(s_[i_]) != std::string_view::npos;
  }
  char Take() { return s_[i_++]; }

  // Reads exactly two digits into *out.
  bool TwoDigits(int* out) {
    if (i_ + 2 > s_.size() || !IsDigit(s_[i_]) || !IsDigit(s_[i_ + 1])) {
      return false;
    }
    *out = (s_[i_] - '0') * 10 + (s_[i_ + 1] - '0');
    i_ += 2;
    return true;
  }

  // Reads a run of digits; returns how many.
  size_t Digits(std::string_view* out) {
    const size_t start = i_;
    while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
    *out = s_.substr(start, i_ - start);
    return i_ - start;
  }

  [[nodiscard]] absl::Status Expected(std::string_view what) const {
    if (AtEnd()) {
      return absl::InvalidArgumentError(
          StrCat("expected ", what, " at the end"));
    }
    return absl::InvalidArgumentError(
        StrCat("expected ", what, " at offset ", i_, ", found '",
               std::string_view(&s_[i_], 1), "'"));
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

[[nodiscard]] absl::Status RangeError(std::string_view field, int64_t value,
                                      std::string_view range) {
  return absl::InvalidArgumentError(
      StrCat(field, " ", value, " is out of range (", range, ")"));
}

}  // namespace

[[nodiscard]] absl::StatusOr<int64_t> ParseInstant(std::string_view text) {
  InstantScanner in(text);
  bool negative_year = false;
  bool signed_year = false;
  if (in.PeekAny("+-")) {
    signed_year = true;
    negative_year = in.Take() == '-';
  }
  std::string_view year_digits;
  const size_t n = in.Digits(&year_digits);
  if (n < 4 || (!signed_year && n > 4)) {
    return absl::InvalidArgumentError(
        "the year must have four digits, or a sign and four or more");
  }
  if (n > 9) return absl::InvalidArgumentError("the year is out of range");
  int64_t year = 0;
  for (char c : year_digits) year = year * 10 + (c - '0');
  if (negative_year) year = -year;

  int month = 1, day = 1, hour = 0, minute = 0, second = 0;
  int64_t fraction_micros = 0;
  int64_t offset_seconds = 0;
  bool has_time = false;
  if (in.Peek('-')) {
    in.Take();
    if (!in.TwoDigits(&month)) return in.Expected("a two-digit month");
    if (in.Peek('-')) {
      in.Take();
      if (!in.TwoDigits(&day)) return in.Expected("a two-digit day");
      if (in.PeekAny("Tt ")) {
        in.Take();
        has_time = true;
        if (!in.TwoDigits(&hour)) return in.Expected("a two-digit hour");
        if (in.Peek(':')) {
          in.Take();
          if (!in.TwoDigits(&minute)) return in.Expected("two-digit minutes");
          if (in.Peek(':')) {
            in.Take();
            if (!in.TwoDigits(&second)) {
              return in.Expected("two-digit seconds");
            }
            if (in.Peek('.')) {
              in.Take();
              std::string_view frac;
              if (in.Digits(&frac) == 0) {
                return in.Expected("digits after '.'");
              }
              int64_t scale = 100000;
              for (size_t k = 0; k < frac.size() && k < 6; ++k) {
                fraction_micros += (frac[k] - '0') * scale;
                scale /= 10;
              }
            }
          }
        }
      }
    }
  }
  if (has_time) {
    if (in.PeekAny("Zz")) {
      in.Take();
    } else if (in.PeekAny("+-")) {
      const bool negative = in.Take() == '-';
      int oh = 0, om = 0;
      if (!in.TwoDigits(&oh)) return in.Expected("a two-digit offset hour");
      if (!in.Peek(':')) return in.Expected("':' in the offset");
      in.Take();
      if (!in.TwoDigits(&om)) return in.Expected("two-digit offset minutes");
      if (oh > 23) return RangeError("offset hour", oh, "0-23");
      if (om > 59) return RangeError("offset minute", om, "0-59");
      offset_seconds = (oh * 3600 + om * 60) * (negative ? -1 : 1);
    }
  }
  if (!in.AtEnd()) {
    return in.Expected(has_time ? "the end or an offset (Z, +HH:MM)"
                                : "the end, or '-' and more of the date");
  }
  if (month < 1 || month > 12) return RangeError("month", month, "1-12");
  const int dim = DaysInMonth(year, month);
  if (day < 1 || day > dim) {
    return RangeError("day", day, StrCat("1-", dim));
  }
  if (hour > 23) return RangeError("hour", hour, "0-23");
  if (minute > 59) return RangeError("minute", minute, "0-59");
  if (second == 60) {
    return absl::InvalidArgumentError("leap seconds are not supported");
  }
  if (second > 59) return RangeError("second", second, "0-59");

  const __int128 seconds =
      static_cast<__int128>(DaysFromCivil(year, month, day)) * kSecondsPerDay +
      hour * 3600 + minute * 60 + second - offset_seconds;
  const __int128 micros = seconds * kMicrosPerSecond + fraction_micros;
  if (micros > INT64_MAX || micros < INT64_MIN) {
    return absl::InvalidArgumentError(
        "the instant is out of range (about 290,000 years either side of "
        "1970)");
  }
  return static_cast<int64_t>(micros);
}

std::string FormatInstant(int64_t micros) {
  const int64_t seconds = FloorDiv(micros, kMicrosPerSecond);
  // Computed apart from `seconds`: seconds * 1e6 overflows for INT64_MIN.
  int64_t fraction = micros % kMicrosPerSecond;
  if (fraction < 0) fraction += kMicrosPerSecond;
  const int64_t days = FloorDiv(seconds, kSecondsPerDay);
  const int64_t second_of_day = seconds - days * kSecondsPerDay;
  int64_t year;
  int month, day;
  CivilFromDays(days, &year, &month, &day);
  const int hour = static_cast<int>(second_of_day / 3600);
  const int minute = static_cast<int>(second_of_day / 60 % 60);
  const int second = static_cast<int>(second_of_day % 60);

  char buf[64];
  int len;
  if (year >= 0 && year <= 9999) {
    len =
        std::snprintf(buf, sizeof buf, "%04lld", static_cast<long long>(year));
  } else {
    len = std::snprintf(buf, sizeof buf, "%c%04lld", year < 0 ? '-' : '+',
                        static_cast<long long>(year < 0 ? -year : year));
  }
  len += std::snprintf(buf + len, sizeof buf - len, "-%02d-%02dT%02d:%02d:%02d",
                       month, day, hour, minute, second);
  if (fraction != 0) {
    if (fraction % 1000 == 0) {
      len += std::snprintf(buf + len, sizeof buf - len, ".%03lld",
                           static_cast<long long>(fraction / 1000));
    } else {
      len += std::snprintf(buf + len, sizeof buf - len, ".%06lld",
                           static_cast<long long>(fraction));
    }
  }
  buf[len++] = 'Z';
  return std::string(buf, len);
}

}  // namespace mentat::edn
