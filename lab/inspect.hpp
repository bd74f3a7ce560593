// `pe inspect` without its command line: an encoding's own quantities as JSON (its tables,
// buckets, slopes, frequencies), for the chapters' figures and for the live pages, which
// call the same function in the browser (programs/web/).
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace pe {

/// What to inspect: an encoding built as a model of this shape would build it.
struct InspectRequest {
  std::string encoding;                        ///< a registered encoding (`pe list`)
  std::int64_t length = 32;                    ///< positions
  std::int64_t dim = 64;                       ///< model width C
  std::int64_t heads = 1;                      ///< attention heads H
  std::map<std::string, std::string> options;  ///< the encoding's own options
  /// A query of one head (D = dim / heads numbers) to pass through the rotate hook, or none.
  std::vector<double> vector;
  /// Positions at which to rotate `vector` (empty: 0 .. length-1); only with a vector.
  std::vector<std::int64_t> positions;
};

/// {"encoding", "length", "dim", "heads", "options", then each of the encoding's inspect()
/// tensors as {"shape", "values"}, and with a vector "rotated": {"positions", "values"}}.
/// Every mistake in the request is an ag::Error naming it.
nlohmann::json inspect_encoding(const InspectRequest& request);

}  // namespace pe
