#include "chapters/A-performance/roofline_figure.hpp"

#include <sstream>

#include "ag/error.hpp"
#include "lab/figures.hpp"

namespace appendix_a {

namespace {
// The colours of the book's line plots (Okabe and Ito).
constexpr const char* kColours[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00"};

// Where a kernel's name goes beside its point: the four large products sit close together,
// so two are named on the left and the pairs are pulled apart vertically.
std::string label_placement(const std::string& kernel) {
  if (kernel == "gemm q/k/v/out") return "right offset -0.8,0.5";
  if (kernel == "gemm weight grad") return "right offset -0.8,-0.5";
  if (kernel == "gemm ffn expand") return "left offset 0.8,0.5";
  if (kernel == "gemm ffn contract") return "left offset 0.8,-0.5";
  // the three small products sit close together: weights v above, scores below, head right
  if (kernel == "gemm weights v") return "right offset -0.8,0.4";
  if (kernel == "gemm scores q k^T") return "right offset -0.8,-0.4";
  return "left offset 0.8,0";
}
}  // namespace

void write_roofline(const std::string& png_path, const std::vector<bench::Peak>& peaks,
                    const std::vector<Bandwidth>& bandwidths,
                    const std::vector<KernelPoint>& points) {
  ag::check(!peaks.empty() && !bandwidths.empty(), "write_roofline",
            "needs at least one peak and one bandwidth");
  std::ostringstream gp;
  gp << "set terminal pngcairo noenhanced size 900,600 font ',11'\n"
     << "set logscale xy\n"
     << "set xrange [0.05:1000]\nset yrange [0.3:" << 2 * peaks.front().gflops << "]\n"
     << "set xlabel 'arithmetic intensity (flop per byte of compulsory traffic)'\n"
     << "set ylabel 'GFLOP/s, one core, float32'\n"
     << "set title 'Roofline of this core: kernels of one training step of the reference model'\n"
     << "set key bottom right box opaque\nset grid xtics ytics mxtics mytics lc '#dddddd'\n"
     << "set samples 400\n";
  // The kernels, named next to their points: products in blue, row-wise and element-wise
  // ops in red.
  for (std::size_t i = 0; i < points.size(); ++i)
    gp << "set label " << i + 2 << " '" << points[i].name << "' at " << points[i].intensity() << ","
       << points[i].gflops() << " " << label_placement(points[i].name) << " font ',9' front\n";
  gp << "$points << EOD\n";
  for (const KernelPoint& p : points)
    gp << p.intensity() << " " << p.gflops() << " " << (p.name.rfind("gemm", 0) == 0 ? 0 : 1)
       << "\n";
  gp << "EOD\n";
  const double peak = peaks.front().gflops;
  gp << "set label 1 '" << peaks.front().isa << " peak " << static_cast<int>(peak + 0.5)
     << " GFLOP/s' at graph 0.02, first " << peak * 1.15 << "\n";
  gp << "plot ";
  for (std::size_t i = 0; i < bandwidths.size(); ++i) {
    const Bandwidth& b = bandwidths[i];
    gp << "(x * " << b.gbytes_per_second << " < " << peak << " ? x * " << b.gbytes_per_second
       << " : " << peak << ") with lines lw 2 lc rgb '" << kColours[(i + 2) % 5] << "' title '"
       << b.level << " roof, " << static_cast<int>(b.gbytes_per_second + 0.5) << " GB/s', ";
  }
  for (std::size_t i = 1; i < peaks.size(); ++i)
    gp << peaks[i].gflops << " with lines dt 2 lw 1 lc rgb '#777777' title '" << peaks[i].isa
       << " peak, " << static_cast<int>(peaks[i].gflops + 0.5) << " GFLOP/s', ";
  gp << "$points using 1:2:($3 == 0 ? 0x0072b2 : 0xd55e00) with points pt 7 ps 1.4 "
        "lc rgb variable title 'measured kernel (blue: matrix product)'\n";
  pe::run_gnuplot(gp.str(), png_path, "write_roofline");
}

}  // namespace appendix_a
