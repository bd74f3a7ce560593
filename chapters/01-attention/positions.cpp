#include "chapters/01-attention/positions.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "ag/ops.hpp"

namespace pe {

Positions::Positions(std::int64_t first) : first_(first) {
  ag::check(first >= 0, "Positions", "the first position must not be negative, got ", first);
}

namespace {

// sorted and distinct: the causal mask then hides exactly the later tokens, as it does for
// contiguous positions
void check_ids(const std::vector<std::int64_t>& ids) {
  ag::check(!ids.empty(), "Positions", "needs at least one position id");
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ag::check(ids[i] >= 0, "Positions", "position ids must not be negative, got ", ids[i],
              " at index ", i);
    ag::check(i == 0 || ids[i - 1] < ids[i], "Positions",
              "position ids must be sorted and distinct, got ", ids[i - 1], " then ", ids[i],
              " at index ", i);
  }
}

}  // namespace

Positions::Positions(std::vector<std::int64_t> ids) : sampled_(std::move(ids)) {
  check_ids(sampled_);
  first_ = sampled_.front();
}

Positions Positions::with_keys(std::int64_t first, std::vector<std::int64_t> key_ids) {
  Positions positions(first);
  check_ids(key_ids);
  positions.key_ids_ = std::move(key_ids);
  return positions;
}

std::int64_t Positions::first() const { return first_; }

std::int64_t Positions::size() const {
  return sampled_.empty() ? -1 : static_cast<std::int64_t>(sampled_.size());
}

void Positions::check_count(std::int64_t count, const char* who) const {
  ag::check(count >= 0, who, "a count of tokens must not be negative, got ", count);
  if (!sampled_.empty())
    ag::check(count == size(), who, "expected ", count, " tokens at the ", size(),
              " sampled positions, one position id per token");
}

std::vector<std::int64_t> Positions::ids(std::int64_t count) const {
  check_count(count, "Positions");
  if (!sampled_.empty()) return sampled_;
  std::vector<std::int64_t> out(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) out[i] = first_ + i;
  return out;
}

std::int64_t Positions::end(std::int64_t count) const {
  check_count(count, "Positions");
  return sampled_.empty() ? first_ + count : sampled_.back() + 1;
}

Positions Positions::keys(std::int64_t count) const {
  if (!key_ids_.empty()) {
    ag::check(count == static_cast<std::int64_t>(key_ids_.size()), "Positions", "the ",
              key_ids_.size(), " explicit key positions do not fit the call's ", count, " keys");
    return Positions(key_ids_);
  }
  if (sampled_.empty()) return Positions(0);
  ag::check(count == size(), "Positions", "sampled positions attend to keys at the same ", size(),
            " ids (no cache), but the call has ", count, " keys");
  return *this;
}

bool Positions::operator==(const Positions& other) const {
  return first_ == other.first_ && sampled_ == other.sampled_ && key_ids_ == other.key_ids_;
}

// [random-positions]
Positions random_positions(std::int64_t count, std::int64_t max_positions, ag::Rng& rng) {
  ag::check(count >= 1 && count <= max_positions, "random_positions", "cannot draw ", count,
            " distinct positions from 0 .. ", max_positions - 1,
            " (the length must be at least 1 and at most L_max = ", max_positions, ")");
  // Floyd's algorithm: exactly `count` draws, each subset equally likely
  std::set<std::int64_t> chosen;
  for (std::int64_t j = max_positions - count; j < max_positions; ++j) {
    const std::int64_t t = rng.randint(0, j + 1);
    chosen.insert(chosen.count(t) ? j : t);
  }
  return Positions(std::vector<std::int64_t>(chosen.begin(), chosen.end()));
}
// [random-positions]

Positions evaluation_positions(std::int64_t length, std::int64_t max_positions, ag::Rng& rng) {
  if (max_positions == 0) return Positions(0);
  ag::check(length <= max_positions, "evaluate", "length ", length,
            " is longer than L_max = ", max_positions,
            " of the randomized positions the model was trained with (its positions are drawn "
            "from 0 .. L_max-1; evaluate at contiguous positions instead)");
  return random_positions(length, max_positions, rng);
}

ag::Tensor rows_at(const ag::Tensor& table, const Positions& positions, std::int64_t count,
                   const char* who) {
  const std::int64_t end = positions.end(count);
  ag::check(end <= table.size(0), who, "positions up to ", end - 1, " need ", end,
            " rows but the table has ", table.size(0));
  if (positions.is_contiguous())
    return ag::slice(table, 0, positions.first(), positions.first() + count);
  return ag::embedding(table, ag::Indices{positions.ids(count), {count}});
}

}  // namespace pe
