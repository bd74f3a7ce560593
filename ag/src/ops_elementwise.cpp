// Elementwise ops. A forward runs over whole buffers: a kernel where training spends its
// time (+ - * /, exp, relu), a plain loop (map_values) for the other functions, and
// xtensor's broadcasting only for shapes the kernels do not cover. Each backward rule is a
// line or two of ops on the incoming gradient.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "ag/kernels/elementwise.hpp"
#include "ag/ops.hpp"
#include "ag/profile.hpp"
#include "ag/src/impl.hpp"

namespace ag {

void add_into(Tensor& total, const Tensor& increment) {
  dispatch(total.dtype(), [&](auto t) {
    using T = decltype(t);
    kernels::axpy(T(1), increment.data<T>(), total.data<T>(),
                  static_cast<std::size_t>(total.numel()));
  });
}

namespace {

enum class Binary { add, sub, mul, div };

template <class T>
void binary_kernel(Binary kind, const T* a, const T* b, T* out, std::size_t n) {
  switch (kind) {
    case Binary::add:
      return kernels::add(a, b, out, n);
    case Binary::sub:
      return kernels::sub(a, b, out, n);
    case Binary::mul:
      return kernels::mul(a, b, out, n);
    case Binary::div:
      return kernels::div(a, b, out, n);
  }
}

template <class T, class A, class B>
auto binary_expression(Binary kind, A&& a, B&& b) -> xt::xarray<T> {
  switch (kind) {
    case Binary::add:
      return a + b;
    case Binary::sub:
      return a - b;
    case Binary::mul:
      return a * b;
    case Binary::div:
      return a / b;
  }
  return {};
}

// The values of a op b with broadcasting. Fast paths for equal shapes and for a trailing
// block (x + bias); anything else goes through xtensor's broadcasting.
Tensor binary_values(const char* op, Binary kind, const Tensor& a, const Tensor& b) {
  check_same_dtype(op, a, b);
  const Shape shape = broadcast_shapes(op, a.shape(), b.shape());
  Tensor out = empty(shape, a.dtype());
  dispatch(a.dtype(), [&](auto t) {
    using T = decltype(t);
    const auto n = static_cast<std::size_t>(out.numel());
    if (a.shape() == b.shape()) {
      binary_kernel(kind, a.data<T>(), b.data<T>(), out.data<T>(), n);
    } else if (a.shape() == shape && is_trailing_block(shape, b.shape()) && b.numel() > 1) {
      const auto block = static_cast<std::size_t>(b.numel());
      for (std::size_t r = 0; r < n / block; ++r)
        binary_kernel(kind, a.data<T>() + r * block, b.data<T>(), out.data<T>() + r * block, block);
    } else if (a.shape() == shape && b.numel() == 1) {
      // x op scalar (attention's 1/sqrt(D)): the scalar repeated in a small buffer, so that
      // the kernel runs over the whole of a; xtensor's broadcast was 10x slower.
      std::array<T, 256> repeated;
      repeated.fill(b.data<T>()[0]);
      for (std::size_t at = 0; at < n; at += repeated.size())
        binary_kernel(kind, a.data<T>() + at, repeated.data(), out.data<T>() + at,
                      std::min(repeated.size(), n - at));
    } else {
      xt::xarray<T> values = binary_expression<T>(kind, xview<T>(a), xview<T>(b));
      std::copy(values.begin(), values.end(), out.data<T>());
    }
  });
  return out;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  profile::Scope profile_scope("add");
  const Shape sa = a.shape(), sb = b.shape();
  return record("add", binary_values("add", Binary::add, a, b), {a, b},
                [sa, sb](const Tensor& g) -> std::vector<Tensor> {
                  return {unbroadcast(g, sa), unbroadcast(g, sb)};
                });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  profile::Scope profile_scope("sub");
  const Shape sa = a.shape(), sb = b.shape();
  return record("sub", binary_values("sub", Binary::sub, a, b), {a, b},
                [sa, sb](const Tensor& g) -> std::vector<Tensor> {
                  return {unbroadcast(g, sa), unbroadcast(neg(g), sb)};
                });
}

// [mul]
Tensor mul(const Tensor& a, const Tensor& b) {
  profile::Scope profile_scope("mul");
  Tensor a0 = a.detach(), b0 = b.detach();
  return record("mul", binary_values("mul", Binary::mul, a, b), {a, b},
                [a0, b0](const Tensor& g) -> std::vector<Tensor> {
                  // d(ab)/da = b, d(ab)/db = a
                  return {unbroadcast(mul(g, b0), a0.shape()), unbroadcast(mul(g, a0), b0.shape())};
                });
}
// [mul]

Tensor div(const Tensor& a, const Tensor& b) {
  profile::Scope profile_scope("div");
  Tensor a0 = a.detach(), b0 = b.detach();
  return record("div", binary_values("div", Binary::div, a, b), {a, b},
                [a0, b0](const Tensor& g) -> std::vector<Tensor> {
                  // d(a/b)/da = 1/b, d(a/b)/db = -a/b^2
                  // TASK 0.3 begin: the division backward rule
                  Tensor ga = div(g, b0);
                  Tensor gb = neg(div(mul(ga, a0), b0));
                  return {unbroadcast(ga, a0.shape()), unbroadcast(gb, b0.shape())};
                  // TASK 0.3 end
                });
}

Tensor add(const Tensor& a, double b) { return add(a, scalar(b, a.dtype())); }
Tensor mul(const Tensor& a, double b) { return mul(a, scalar(b, a.dtype())); }
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, double b) { return add(a, b); }
Tensor operator-(const Tensor& a, double b) { return add(a, -b); }
Tensor operator*(const Tensor& a, double b) { return mul(a, b); }
Tensor operator*(double a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, double b) { return mul(a, 1.0 / b); }
Tensor operator-(const Tensor& a) { return neg(a); }

namespace {

// Applies a scalar function to every element. A plain loop on purpose: xtensor's SIMD
// assignment mixes xsimd's and the standard library's versions of tanh, log, ... depending
// on where a buffer starts in memory, which made results differ in the last bit from run
// to run. (+ - * / and copies are rounded the same either way, so the xtensor expression
// that the binary ops keep for general broadcasting is safe.)
template <class F>
Tensor map_values(const Tensor& x, F f) {
  Tensor out = empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    const T* src = x.data<T>();
    T* dst = out.data<T>();
    const std::int64_t n = x.numel();
    for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(f(src[i]));
  });
  return out;
}

}  // namespace

Tensor neg(const Tensor& x) {
  profile::Scope profile_scope("neg");
  Tensor out = map_values(x, [](auto v) { return -v; });
  return record("neg", out, {x}, [](const Tensor& g) -> std::vector<Tensor> { return {neg(g)}; });
}

Tensor exp(const Tensor& x) {
  profile::Scope profile_scope("exp");
  Tensor out = empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    kernels::exp(x.data<T>(), out.data<T>(), static_cast<std::size_t>(x.numel()));
  });
  Tensor y = out.detach();  // d exp(x) = exp(x) dx
  return record("exp", out, {x},
                [y](const Tensor& g) -> std::vector<Tensor> { return {mul(g, y)}; });
}

Tensor log(const Tensor& x) {
  profile::Scope profile_scope("log");
  Tensor out = map_values(x, [](auto v) { return std::log(v); });
  Tensor x0 = x.detach();
  return record("log", out, {x},
                [x0](const Tensor& g) -> std::vector<Tensor> { return {div(g, x0)}; });
}

Tensor sqrt(const Tensor& x) {
  profile::Scope profile_scope("sqrt");
  Tensor out = map_values(x, [](auto v) { return std::sqrt(v); });
  Tensor y = out.detach();  // d sqrt(x) = dx / (2 sqrt(x))
  return record("sqrt", out, {x},
                [y](const Tensor& g) -> std::vector<Tensor> { return {div(mul(g, 0.5), y)}; });
}

Tensor tanh(const Tensor& x) {
  profile::Scope profile_scope("tanh");
  Tensor out = map_values(x, [](auto v) { return std::tanh(v); });
  Tensor y = out.detach();  // d tanh(x) = (1 - tanh(x)^2) dx
  return record("tanh", out, {x}, [y](const Tensor& g) -> std::vector<Tensor> {
    return {mul(g, add(neg(mul(y, y)), 1.0))};
  });
}

Tensor sin(const Tensor& x) {
  profile::Scope profile_scope("sin");
  Tensor out = map_values(x, [](auto v) { return std::sin(v); });
  Tensor x0 = x.detach();
  return record("sin", out, {x},
                [x0](const Tensor& g) -> std::vector<Tensor> { return {mul(g, cos(x0))}; });
}

Tensor cos(const Tensor& x) {
  profile::Scope profile_scope("cos");
  Tensor out = map_values(x, [](auto v) { return std::cos(v); });
  Tensor x0 = x.detach();
  return record("cos", out, {x},
                [x0](const Tensor& g) -> std::vector<Tensor> { return {neg(mul(g, sin(x0)))}; });
}

Tensor pow(const Tensor& x, double exponent) {
  profile::Scope profile_scope("pow");
  Tensor out = map_values(x, [exponent](auto v) { return std::pow(v, exponent); });
  Tensor x0 = x.detach();  // d x^p = p x^(p-1) dx
  return record("pow", out, {x}, [x0, exponent](const Tensor& g) -> std::vector<Tensor> {
    return {mul(g, mul(pow(x0, exponent - 1.0), exponent))};
  });
}

Tensor relu(const Tensor& x) {
  profile::Scope profile_scope("relu");
  Tensor out = empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    kernels::relu(x.data<T>(), out.data<T>(), static_cast<std::size_t>(x.numel()));
  });
  Tensor x0 = x.detach();
  return record("relu", out, {x}, [x0](const Tensor& g) -> std::vector<Tensor> {
    Tensor gx = empty(g.shape(), g.dtype());
    dispatch(g.dtype(), [&](auto t) {
      using T = decltype(t);
      kernels::relu_backward(x0.data<T>(), g.data<T>(), gx.data<T>(),
                             static_cast<std::size_t>(g.numel()));
    });
    return {gx};
  });
}

Tensor abs(const Tensor& x) {
  profile::Scope profile_scope("abs");
  Tensor out = map_values(x, [](auto v) { return std::abs(v); });
  // d|x| = sign(x) dx, with sign(0) = 0 (a subgradient; the kink is kept away from in checks)
  Tensor sign = map_values(x, [](auto v) { return decltype(v)((v > 0) - (v < 0)); });
  return record("abs", out, {x},
                [sign](const Tensor& g) -> std::vector<Tensor> { return {mul(g, sign)}; });
}

Tensor log1p(const Tensor& x) {
  profile::Scope profile_scope("log1p");
  Tensor out = map_values(x, [](auto v) { return std::log1p(v); });
  Tensor x0 = x.detach();  // d log(1 + x) = dx / (1 + x)
  return record("log1p", out, {x},
                [x0](const Tensor& g) -> std::vector<Tensor> { return {div(g, add(x0, 1.0))}; });
}

Tensor sigmoid(const Tensor& x) {
  profile::Scope profile_scope("sigmoid");
  // For x very negative e^-x is +inf and the quotient 0, as it should be: no branch needed.
  Tensor out = map_values(x, [](auto v) { return 1 / (1 + std::exp(-v)); });
  Tensor y = out.detach();  // d sigmoid(x) = sigmoid(x) (1 - sigmoid(x)) dx
  return record("sigmoid", out, {x}, [y](const Tensor& g) -> std::vector<Tensor> {
    return {mul(g, mul(y, add(neg(y), 1.0)))};
  });
}

Tensor softplus(const Tensor& x) {
  profile::Scope profile_scope("softplus");
  // log(1 + e^x) = max(x, 0) + log(1 + e^-|x|): the exponent is never positive
  Tensor out = map_values(
      x, [](auto v) { return std::max(v, decltype(v)(0)) + std::log1p(std::exp(-std::abs(v))); });
  Tensor x0 = x.detach();  // d softplus(x) = e^x / (1 + e^x) dx = sigmoid(x) dx
  return record("softplus", out, {x},
                [x0](const Tensor& g) -> std::vector<Tensor> { return {mul(g, sigmoid(x0))}; });
}

Tensor log_sigmoid(const Tensor& x) {
  profile::Scope profile_scope("log_sigmoid");
  // log(1 / (1 + e^-x)) = min(x, 0) - log(1 + e^-|x|): the exponent is never positive
  Tensor out = map_values(
      x, [](auto v) { return std::min(v, decltype(v)(0)) - std::log1p(std::exp(-std::abs(v))); });
  // d log_sigmoid(x) = (1 - sigmoid(x)) dx = sigmoid(-x) dx, whose small values for a large x
  // survive (1 - sigmoid(x) would be 1 - 1)
  Tensor x0 = x.detach();
  return record("log_sigmoid", out, {x}, [x0](const Tensor& g) -> std::vector<Tensor> {
    return {mul(g, sigmoid(neg(x0)))};
  });
}

// [pow-tensor]
Tensor pow(const Tensor& base, const Tensor& exponent) {
  profile::Scope profile_scope("pow");
  check_same_dtype("pow", base, exponent);
  const Shape shape = broadcast_shapes("pow", base.shape(), exponent.shape());
  // Both operands copied out to the result's shape (adding 0 copies them exactly), so that
  // one plain loop computes every element and both backward rules.
  Tensor b, e;
  {
    NoGradGuard no_grad;
    const Tensor zero = zeros(shape, base.dtype());
    b = add(zero, base.detach());
    e = add(zero, exponent.detach());
  }
  Tensor out = empty(shape, base.dtype());
  Tensor d_base = empty(shape, base.dtype()), d_exponent = empty(shape, base.dtype());
  dispatch(base.dtype(), [&](auto t) {
    using T = decltype(t);
    const T *bv = b.data<T>(), *ev = e.data<T>();
    T *y = out.data<T>(), *db = d_base.data<T>(), *de = d_exponent.data<T>();
    for (std::int64_t i = 0; i < out.numel(); ++i) {
      y[i] = std::pow(bv[i], ev[i]);
      db[i] = ev[i] * std::pow(bv[i], ev[i] - 1);          // d b^e / db = e b^(e-1)
      de[i] = bv[i] == 0 ? T(0) : y[i] * std::log(bv[i]);  // d b^e / de = b^e log b
    }
  });
  const Shape base_shape = base.shape(), exponent_shape = exponent.shape();
  const bool base_needs = base.requires_grad(), exponent_needs = exponent.requires_grad();
  return record("pow", out, {base, exponent}, [=](const Tensor& g) -> std::vector<Tensor> {
    // only the gradients asked for: a constant base at 0 has d_base = inf there
    return {base_needs ? unbroadcast(mul(g, d_base), base_shape) : Tensor(),
            exponent_needs ? unbroadcast(mul(g, d_exponent), exponent_shape) : Tensor()};
  });
}
// [pow-tensor]

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  profile::Scope profile_scope("masked_fill");
  check(!mask.requires_grad(), "masked_fill", "the mask is a constant and takes no gradient");
  const Shape shape = broadcast_shapes("masked_fill", x.shape(), mask.shape());
  check(shape == x.shape(), "masked_fill", "mask of shape ", shape_string(mask.shape()),
        " would enlarge x of shape ", shape_string(x.shape()));
  Tensor out = empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    dispatch(mask.dtype(), [&](auto m) {
      using M = decltype(m);
      auto result = xview<T>(out);
      // noalias: out is new, so xtensor need not evaluate into a temporary first (a buffer of
      // x's size, allocated and freed on every call).
      xt::noalias(result) =
          xt::where(xt::not_equal(xview<M>(mask), M(0)), static_cast<T>(value), xview<T>(x));
    });
  });
  Tensor mask0 = mask.detach();
  return record("masked_fill", out, {x}, [mask0](const Tensor& g) -> std::vector<Tensor> {
    return {masked_fill(g, mask0, 0.0)};  // masked entries did not depend on x
  });
}

}  // namespace ag
