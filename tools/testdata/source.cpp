// Test data for the snippet checker (never compiled).
namespace demo {

// [square]
double square(double x) {
  return x * x;
}
// [square]

struct Counter {
  // [outer]
  int count = 0;
  // [inner]
  void bump() { ++count; }
  // [inner]
  // [outer]
};

// [unclosed]
}  // namespace demo
