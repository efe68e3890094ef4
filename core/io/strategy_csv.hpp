#pragma once
// A plan's degrees as CSV fields, in the order every table with plans lists them: tp, pp, dp, cp, ep, vpp,
// micro_batch (the search and the planner's scaling export).
#include "io/csv_writer.hpp"
#include "spec/strategy.hpp"

namespace parallax {

inline CsvWriter& degree_fields(CsvWriter& csv, const Strategy& s)
{
    return csv.integer(s.tp).integer(s.pp).integer(s.dp).integer(s.cp).integer(s.ep).integer(s.vpp).integer(
        s.micro_batch);
}

} // namespace parallax
