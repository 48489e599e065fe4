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
inline constexpr char kInputs[] =
    "[:find ?e ?name :in $ [?email ...] :where [?e :user/email ?email] "
    "[?e :user/name ?name]]";

}  // namespace mentat::bench

#endif  // MENTAT_BENCH_WORKLOAD_QUERIES_H_
