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

// [task]
int twice(int x) {
  // TASK 9.1 begin: double the number
  return 2 * x;
  // TASK 9.1 end
}
// [task]

// [unclosed]
}  // namespace demo
