#include "ag/io.hpp"

#include <cstring>
#include <map>

#include "ag/files.hpp"
#include "ag/src/impl.hpp"

namespace ag {

namespace {

constexpr char kMagic[] = "AGTENSORS2\n";
constexpr std::size_t kMagicSize = sizeof(kMagic) - 1;
// The largest checkpoint we read (the 8-layer model with its optimiser state is ~100 MB): a
// bigger file is refused before any memory is sized from it.
constexpr std::uint64_t kMaxFileBytes = std::uint64_t(4) << 30;

std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t hash = 0xCBF29CE484222325ULL;
  for (unsigned char c : bytes) hash = (hash ^ c) * 0x100000001B3ULL;
  return hash;
}

template <class T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

void put_string(std::string& out, const std::string& text) {
  put<std::uint64_t>(out, text.size());
  out += text;
}

// Reads from an in-memory file, with errors that name the file and what was cut short.
class Reader {
 public:
  Reader(const std::string& path, const std::string& bytes) : path_(path), bytes_(bytes) {}
  template <class T>
  T get(const char* what) {
    T value;
    take(&value, sizeof(T), what);
    return value;
  }
  void take(void* dst, std::size_t n, const char* what) {
    check(n <= bytes_.size() - at_, "load_tensors", "'", path_, "' is truncated (while reading ",
          what, ")");
    std::memcpy(dst, bytes_.data() + at_, n);
    at_ += n;
  }
  std::size_t remaining() const { return bytes_.size() - at_; }
  std::string string(const char* what) {
    const auto size = get<std::uint64_t>(what);
    check(size <= remaining(), "load_tensors", "'", path_, "' is truncated (while reading ", what,
          ")");
    std::string text(size, '\0');
    take(text.data(), size, what);
    return text;
  }

 private:
  const std::string& path_;
  const std::string& bytes_;
  std::size_t at_ = kMagicSize;
};

}  // namespace

void save_tensors(const std::string& path, const NamedTensors& tensors, const Metadata& metadata) {
  std::string bytes(kMagic, kMagicSize);
  put<std::uint64_t>(bytes, metadata.size());
  for (const auto& [key, value] : metadata) {
    put_string(bytes, key);
    put_string(bytes, value);
  }
  put<std::uint64_t>(bytes, tensors.size());
  for (const auto& entry : tensors) {
    const std::string& name = entry.first;
    const Tensor& tensor = entry.second;  // a plain reference: clang 14 cannot capture a binding
    put_string(bytes, name);
    put<std::uint8_t>(bytes, tensor.dtype() == Dtype::f32 ? 0 : 1);
    put<std::uint64_t>(bytes, tensor.shape().size());
    for (auto extent : tensor.shape()) put<std::int64_t>(bytes, extent);
    dispatch(tensor.dtype(), [&](auto t) {
      using T = decltype(t);
      bytes.append(reinterpret_cast<const char*>(tensor.data<T>()), sizeof(T) * tensor.numel());
    });
  }
  put<std::uint64_t>(bytes, fnv1a(bytes));
  write_file_atomically(path, bytes);
}

TensorFile load_tensor_file(const std::string& path) {
  return parse_tensor_file(read_file(path, kMaxFileBytes, "the tensor file"), path);
}

TensorFile parse_tensor_file(const std::string& bytes, const std::string& path) {
  check(bytes.size() >= kMagicSize + 16 && bytes.compare(0, kMagicSize, kMagic) == 0,
        "load_tensors", "'", path, "' is not a tensor file of this library");
  std::uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  const std::string body = bytes.substr(0, bytes.size() - 8);
  check(fnv1a(body) == stored, "load_tensors", "'", path,
        "' is corrupt (checksum mismatch: the file was changed or cut short)");
  Reader in(path, body);
  TensorFile file_contents;
  const auto entries = in.get<std::uint64_t>("the metadata count");
  for (std::uint64_t i = 0; i < entries; ++i) {
    std::string key = in.string("a metadata key");
    file_contents.metadata[key] = in.string("a metadata value");
  }
  const auto count = in.get<std::uint64_t>("the tensor count");
  NamedTensors& tensors = file_contents.tensors;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string name = in.string("a name");
    const auto dtype_code = in.get<std::uint8_t>("a dtype");
    check(dtype_code <= 1, "load_tensors", "'", path, "': tensor '", name, "' has unknown dtype ",
          int(dtype_code));
    const auto rank = in.get<std::uint64_t>("a rank");
    check(rank <= 16, "load_tensors", "'", path, "': tensor '", name, "' has rank ", rank);
    Shape shape(rank);
    for (auto& extent : shape) {
      extent = in.get<std::int64_t>("an extent");
      check(extent >= 0, "load_tensors", "'", path, "': tensor '", name, "' has a negative extent");
    }
    const Dtype dtype = dtype_code == 0 ? Dtype::f32 : Dtype::f64;
    const std::size_t element = dtype == Dtype::f32 ? 4 : 8;
    // numel checks its product for overflow; dividing keeps this comparison from overflowing
    check(std::uint64_t(numel(shape)) <= in.remaining() / element, "load_tensors", "'", path,
          "' is truncated (values of '", name, "')");
    Tensor tensor = empty(shape, dtype);
    dispatch(dtype, [&](auto t) {
      in.take(tensor.data<decltype(t)>(), element * numel(shape), "values");
    });
    tensors.emplace_back(std::move(name), tensor);
  }
  check(in.remaining() == 0, "load_tensors", "'", path, "' has ", in.remaining(),
        " unexpected bytes after its last tensor");
  return file_contents;
}

NamedTensors load_tensors(const std::string& path) { return load_tensor_file(path).tensors; }

void save_module(const std::string& path, const Module& module) {
  save_tensors(path, module.named_parameters());
}

void load_module(const std::string& path, Module& module) {
  load_module(load_tensors(path), module, path);
}

void load_module(const NamedTensors& tensors, Module& module, const std::string& path,
                 const std::string& skip_prefix) {
  std::map<std::string, Tensor> loaded;
  for (auto& [name, tensor] : tensors)
    if (skip_prefix.empty() || name.rfind(skip_prefix, 0) != 0) loaded.emplace(name, tensor);
  auto parameters = module.named_parameters();
  for (auto& [name, parameter] : parameters) {
    auto it = loaded.find(name);
    check(it != loaded.end(), "load_module", "'", path, "' has no tensor '", name,
          "' (was it saved from a different model?)");
    check(it->second.shape() == parameter.shape(), "load_module", "'", path, "': '", name, "' is ",
          shape_string(it->second.shape()), " but the model expects ",
          shape_string(parameter.shape()));
  }
  check(loaded.size() == parameters.size(), "load_module", "'", path, "' holds ", loaded.size(),
        " tensors but the model has ", parameters.size(), " parameters");
  // Only after every check passed: a failed load leaves the model as it was.
  for (auto& [name, parameter] : parameters) parameter.copy_from(loaded.at(name));
}

}  // namespace ag
