#ifndef MENTAT_CLIENT_SHELL_RESULT_WRITER_H_
#define MENTAT_CLIENT_SHELL_RESULT_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shell/cell.h"
#include "shell/output_sink.h"

namespace mentat::cli {

enum class OutputFormat { kTable, kEdn, kJson, kCsv };

// "table", "edn", "json", "csv"; false for anything else.
bool ParseOutputFormat(std::string_view name, OutputFormat* out);
std::string_view OutputFormatName(OutputFormat format);

// How a query's :find spec shapes its result.
enum class ResultShape {
  kRelation,    // [:find ?a ?b]: rows
  kScalar,      // [:find ?a .]: one value (or none)
  kCollection,  // [:find [?a ...]]: one column of values
  kTuple,       // [:find [?a ?b]]: one row
};

struct WriterStyle {
  OutputFormat format = OutputFormat::kTable;
  bool color = false;     // ANSI colours (only on a terminal)
  bool header = true;     // column names (table, csv)
  bool row_count = true;  // "(3 rows)" after a table
  // A table shows each row as a record, one "column | value" line per
  // column (psql's \x): for rows too wide for the terminal.
  bool expanded = false;
};

// Formats one result, given in pieces as it streams in, onto a sink.
// Tables are aligned over the first kTableChunk rows; later rows of a very
// long result keep those widths (psql's FETCH_COUNT does the same), so
// memory stays bounded. Not thread-safe.
class ResultWriter {
 public:
  static constexpr size_t kTableChunk = 10000;

  ResultWriter(OutputSink* sink, WriterStyle style, ResultShape shape);

  void Begin(std::vector<std::string> columns);
  void AddRow(std::vector<Cell> row);
  // Writes what is buffered and the footer.
  void End();

  int64_t rows() const { return rows_; }

 private:
  void FlushTable(bool last);
  // FlushTable for style_.expanded: records instead of a grid.
  void FlushRecords(const std::vector<std::vector<std::string>>& texts,
                    std::string* out);
  void WriteCsvRow(const std::vector<std::string>& fields);
  std::string JsonKey(size_t column) const;

  OutputSink* sink_;
  WriterStyle style_;
  ResultShape shape_;
  std::vector<std::string> columns_;
  std::vector<std::vector<Cell>> pending_;
  std::vector<size_t> widths_;  // fixed after the first table chunk
  bool header_written_ = false;
  int64_t rows_ = 0;
};

// Writes a single value (a pull result, a scalar) in the style's format:
// EDN (pretty-printed when long) for table and edn, JSON for json, one CSV
// field for csv.
void WriteValue(OutputSink* sink, const WriterStyle& style, const Cell& value);

// The key of a field in a record the shell makes itself (a transaction
// report): a keyword in EDN (:tx), a plain string in JSON ("tx").
Cell RecordKey(std::string name, OutputFormat format);

// EDN with one map entry or collection item per line once the value is
// wider than `width` columns.
std::string PrettyEdn(const Cell& cell, size_t width = 80);

// One RFC 4180 field: quoted (quotes doubled) when it holds a comma, quote,
// CR or LF, or starts or ends with a space.
std::string CsvField(std::string_view text);

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_RESULT_WRITER_H_
