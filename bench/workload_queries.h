#ifndef MENTAT_BENCH_WORKLOAD_QUERIES_H_
#define MENTAT_BENCH_WORKLOAD_QUERIES_H_

// The Datalog of ../shared/workload/queries, as the benchmarks send it:
// query-bench in process, mentat-bench over gRPC.

namespace mentat::bench {

inline constexpr char kQ1[] =
    "[:find ?e ?name :in $ ?email :where [?e :user/email ?email] "
    "[?e :user/name ?name]]";
inline constexpr char kQ2[] =
    "[:find ?i ?title ?state :in $ ?email :where [?u :user/email ?email] "
    "[?i :issue/assignee ?u] [?i :issue/title ?title] [?i :issue/state "
    "?state]]";
inline constexpr char kQ3[] =
    "[:find ?state (count ?i) :where [?i :issue/state ?state]]";
inline constexpr char kQ4[] =
    "[:find ?i ?title ?priority :in $ ?min :where [?i :issue/state "
    ":state/open] [?i :issue/priority ?priority] [?i :issue/title ?title] "
    "[(>= ?priority ?min)]]";
inline constexpr char kPull[] =
    "[:find (pull ?e [*]) . :in $ ?e :where [?e :issue/title _]]";
inline constexpr char kSince[] = "[:find ?i :where [?i :issue/state _]]";
// Searches of the titles ("Issue <idx>: <words>"): the search is an input.
inline constexpr char kFulltext[] =
    "[:find ?i ?title :in $ ?q :where [(fulltext $ :issue/title ?q) "
    "[[?i ?title]]]]";
// About 1.7% of the issues at every scale from s up: the crash titles (1
// in 5) whose index starts with 12 (8.5% of 130,000 or of 1,300,000).
inline constexpr char kFulltextSearch[] = "+crash +12*";
inline constexpr char kInputs[] =
    "[:find ?e ?name :in $ [?email ...] :where [?e :user/email ?email] "
    "[?e :user/name ?name]]";

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_WORKLOAD_QUERIES_H_
