// The table of built-in functions and the public function API of
// functions.h.

#include "mentat/query/functions.h"

#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "builtins/builtin_table.h"
#include "mentat/base/str_cat.h"

namespace mentat::query {
namespace builtins {
namespace {

constexpr FunctionInfo kCoreFunctions[] = {
    {"+", 0, kVariadic, Add},
    {"-", 1, kVariadic, Subtract},
    {"*", 0, kVariadic, Multiply},
    {"/", 1, kVariadic, Divide},
    {"quot", 2, 2, Quot},
    {"rem", 2, 2, Rem},
    {"mod", 2, 2, Mod},
    {"inc", 1, 1, Inc},
    {"dec", 1, 1, Dec},
    {"abs", 1, 1, Abs},
    {"max", 1, kVariadic, Max},
    {"min", 1, kVariadic, Min},
    {"long", 1, 1, ToLongFn},
    {"double", 1, 1, ToDoubleFn},
    {"bigint", 1, 1, ToBigIntFn},
    {"bigdec", 1, 1, ToBigDecFn},
    {"compare", 2, 2, Compare},
    {"str", 0, kVariadic, Str},
    {"subs", 2, 3, Subs},
    {"count", 1, 1, Count},
    {"name", 1, 1, Name},
    {"namespace", 1, 1, Namespace},
    {"keyword", 1, 2, Keyword},
    {"identity", 1, 1, Identity},
};

constexpr FunctionInfo kStringFunctions[] = {
    {"upper-case", 1, 1, UpperCase},
    {"lower-case", 1, 1, LowerCase},
    {"trim", 1, 1, Trim},
    {"triml", 1, 1, TrimLeft},
    {"trimr", 1, 1, TrimRight},
};

using FunctionMap = absl::flat_hash_map<std::string, const FunctionInfo*>;

FunctionMap* BuildFunctionMap() {
  auto* map = new FunctionMap();
  for (const FunctionInfo& f : kCoreFunctions) {
    (*map)[std::string(f.name)] = &f;
    (*map)[StrCat("clojure.core/", f.name)] = &f;
  }
  for (const FunctionInfo& f : kStringFunctions) {
    (*map)[std::string(f.name)] = &f;
    (*map)[StrCat("clojure.string/", f.name)] = &f;
  }
  return map;
}

}  // namespace

static const FunctionMap& Functions() {
  static const FunctionMap* const kMap = BuildFunctionMap();
  return *kMap;
}

const FunctionInfo* FindFunction(std::string_view name) {
  auto it = Functions().find(absl::string_view(name.data(), name.size()));
  return it == Functions().end() ? nullptr : it->second;
}

std::vector<std::string_view> FunctionNames() {
  std::vector<std::string_view> names;
  names.reserve(Functions().size());
  for (const auto& [name, info] : Functions()) names.push_back(name);
  return names;
}

}  // namespace builtins

std::vector<std::string_view> BuiltinFunctionNames() {
  return builtins::FunctionNames();
}

bool IsBuiltinFunction(std::string_view name, size_t arity) {
  const builtins::FunctionInfo* f = builtins::FindFunction(name);
  return f != nullptr && f->Accepts(arity);
}

absl::StatusOr<std::optional<storage::Value>> CallFunction(
    std::string_view name, std::span<const storage::Value> args) {
  const builtins::FunctionInfo* f = builtins::FindFunction(name);
  if (f == nullptr) {
    return absl::InvalidArgumentError(StrCat("unknown function ", name));
  }
  if (!f->Accepts(args.size())) {
    return absl::InvalidArgumentError(StrCat(
        "wrong number of arguments (", args.size(), ") to function ", name));
  }
  return f->fn(args);
}

}  // namespace mentat::query
