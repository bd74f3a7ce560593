// The roofline of this machine as a PNG (gnuplot): attainable GFLOP/s against arithmetic
// intensity, one roof per measured bandwidth under the widest FMA peak, and the measured
// kernels as points.
#pragma once
#include <string>
#include <vector>

#include "chapters/A-performance/measure.hpp"
#include "programs/bench/peak_fma.hpp"

namespace appendix_a {

/// Writes png_path. Throws ag::Error if gnuplot is missing or fails (pe::run_gnuplot).
void write_roofline(const std::string& png_path, const std::vector<bench::Peak>& peaks,
                    const std::vector<Bandwidth>& bandwidths,
                    const std::vector<KernelPoint>& points);

}  // namespace appendix_a
