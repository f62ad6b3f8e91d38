#include "sim/checkpoint.hpp"

#include "sim/probe_metrics.hpp"

#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "common/engine_version.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"

namespace p0sim::sim {
namespace fs = std::filesystem;

static_assert(std::endian::native == std::endian::little, "checkpoints copy little-endian bytes as they are");

namespace {

constexpr char kMagic[8] = {'P', '0', 'S', 'I', 'M', 'C', 'K', 'P'};
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 + 8 + 8;
constexpr std::uint64_t kDataStream = 0, kProbeStream = 1;  // DataGenerator::fill streams (train.cpp, probe_trace.cpp)
const char* const kNewest = "state.ckpt";
const char* const kPrevious = "state.prev.ckpt";
const char* const kIncoming = "next.ckpt";

std::uint64_t fnv1a64(const char* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

class Writer {
 public:
  template <typename T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put_string(const std::string& s) {
    put<std::uint64_t>(s.size());
    out_ += s;
  }
  void put_floats(const std::vector<float>& v) {
    put<std::uint64_t>(v.size());
    if (!v.empty()) out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

// Reads what Writer wrote; any overrun is a corrupt file (the checksum makes that rare: it needs
// a foreign file with a valid checksum).
class Reader {
 public:
  Reader(const std::string& bytes, std::size_t pos, const std::string& where) : s_(bytes), pos_(pos), where_(where) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, s_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::uint64_t count(std::uint64_t item_bytes) {
    const auto n = get<std::uint64_t>();
    if (item_bytes > 0 && n > (s_.size() - pos_) / item_bytes) fail("a length runs past the end of the file");
    return n;
  }
  std::string get_string() {
    const auto n = count(1);
    std::string out = s_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  std::vector<float> get_floats() {
    const auto n = count(sizeof(float));
    std::vector<float> out(n);
    if (n > 0) std::memcpy(out.data(), s_.data() + pos_, n * sizeof(float));  // data() may be null when empty
    pos_ += n * sizeof(float);
    return out;
  }
  bool at_end() const { return pos_ == s_.size(); }
  [[noreturn]] void fail(const std::string& why) const { throw UsageError(where_, "corrupt checkpoint: " + why); }

 private:
  void need(std::size_t n) const {
    if (s_.size() - pos_ < n) fail("truncated");
  }
  const std::string& s_;
  std::size_t pos_;
  std::string where_;
};

// Every state metric of the registry, in its order, so a new metric is checkpointed with the rest.
void put_state_metrics(Writer& w, const StateMetrics& m) {
  for (const LayerMetric& lm : layer_metrics())
    if (lm.state_field) w.put(m.*lm.state_field);
}

StateMetrics get_state_metrics(Reader& r) {
  StateMetrics m;
  for (const LayerMetric& lm : layer_metrics())
    if (lm.state_field) m.*lm.state_field = r.get<double>();
  return m;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

fs::path checkpoint_dir(const fs::path& run_dir) { return run_dir / "checkpoint"; }

std::string encode_checkpoint(const std::string& fingerprint, const TrainState& st) {
  Writer w;
  w.put_string(fingerprint);
  w.put<std::int64_t>(st.step);
  w.put<std::uint64_t>(kDataStream);
  w.put<std::uint64_t>(static_cast<std::uint64_t>(st.step));  // next batch index of the data stream
  w.put<std::uint64_t>(kProbeStream);
  w.put<std::uint64_t>(0);  // the probe batch is batch 0 of its stream, the same at every probe
  w.put<double>(st.wall_seconds);
  w.put<std::int64_t>(st.adam_steps);
  w.put_floats(st.params);
  w.put_floats(st.adam_m);
  w.put_floats(st.adam_v);
  w.put<std::uint64_t>(st.log.size());
  for (const StepLog& e : st.log) {
    w.put<std::int64_t>(e.step);
    for (double v : {e.loss, e.lr, e.grad_norm, e.tokens_per_s}) w.put(v);
  }
  w.put<std::uint64_t>(st.probes.size());
  for (const ProbeRecord& p : st.probes) {
    w.put<std::int64_t>(p.step);
    for (double v : {p.loss, p.accuracy, p.first_accuracy, p.query_accuracy}) w.put(v);
    w.put<std::int64_t>(p.scored);
    w.put<std::int64_t>(p.first_scored);
    w.put<std::int64_t>(p.query_scored);
    w.put<std::uint64_t>(p.layers.size());
    for (const LayerProbe& l : p.layers) {
      put_state_metrics(w, l.state);
      put_state_metrics(w, l.mid);
      for (double v : {l.sink.sink_rate, l.sink.attn_to_0, l.sink.attn_to_1, l.sink.sink_1}) w.put(v);
      w.put<std::uint64_t>(l.heads.size());
      for (const HeadAttention& h : l.heads)
        for (const HeadMetric& m : kHeadMetrics) w.put(h.*m.field);
    }
  }
  const std::string& payload = w.bytes();
  std::string out(kMagic, sizeof kMagic);
  Writer head;
  head.put<std::uint32_t>(kCheckpointVersion);
  head.put<std::uint32_t>(kEngineVersion);
  head.put<std::uint64_t>(payload.size());
  head.put<std::uint64_t>(fnv1a64(payload.data(), payload.size()));
  return out + head.bytes() + payload;
}

TrainState decode_checkpoint(const std::string& bytes, const std::string& fingerprint, int steps,
                             const std::string& where) {
  return decode_checkpoint(
      bytes, [&](const std::string& stored) { return stored == fingerprint; }, steps, where);
}

TrainState decode_checkpoint(const std::string& bytes, const FingerprintCheck& fits, int steps,
                             const std::string& where) {
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw UsageError(where, "not a p0sim checkpoint (bad magic)");
  Reader head(bytes, sizeof kMagic, where);
  const auto version = head.get<std::uint32_t>();
  if (version != kCheckpointVersion)
    throw UsageError(where, "checkpoint format version " + std::to_string(version) + ", this p0sim reads version " +
                                std::to_string(kCheckpointVersion));
  const auto engine = head.get<std::uint32_t>();
  if (engine != static_cast<std::uint32_t>(kEngineVersion))
    throw UsageError(where, "checkpoint of engine version " + std::to_string(engine) +
                                ", this p0sim is engine version " + std::to_string(kEngineVersion) +
                                " (its arithmetic differs, so the run cannot continue bit for bit): start it over");
  const auto payload_bytes = head.get<std::uint64_t>();
  const auto checksum = head.get<std::uint64_t>();
  if (payload_bytes != bytes.size() - kHeaderBytes)
    throw UsageError(where, "corrupt checkpoint: " + std::to_string(bytes.size() - kHeaderBytes) +
                                " payload bytes, header says " + std::to_string(payload_bytes));
  if (fnv1a64(bytes.data() + kHeaderBytes, bytes.size() - kHeaderBytes) != checksum)
    throw UsageError(where, "corrupt checkpoint: checksum mismatch");

  Reader r(bytes, kHeaderBytes, where);
  if (!fits(r.get_string()))
    throw UsageError(where, "checkpoint of a different training configuration (options changed since it was written?)");
  TrainState st;
  const auto step = r.get<std::int64_t>();
  if (step < 0 || step > steps) r.fail("step " + std::to_string(step) + " outside 0.." + std::to_string(steps));
  st.step = static_cast<int>(step);
  if (r.get<std::uint64_t>() != kDataStream || r.get<std::uint64_t>() != static_cast<std::uint64_t>(st.step) ||
      r.get<std::uint64_t>() != kProbeStream || r.get<std::uint64_t>() != 0)
    r.fail("RNG stream positions do not match the step");
  st.wall_seconds = r.get<double>();
  st.adam_steps = r.get<std::int64_t>();
  st.params = r.get_floats();
  st.adam_m = r.get_floats();
  st.adam_v = r.get_floats();
  const std::size_t n_params = st.params.size();
  if (st.adam_m.size() != n_params || st.adam_v.size() != n_params) r.fail("moment sizes differ from the parameters'");
  const auto n_log = r.count(8 + 4 * 8);
  st.log.resize(n_log);
  for (StepLog& e : st.log) {
    e.step = static_cast<int>(r.get<std::int64_t>());
    for (double* v : {&e.loss, &e.lr, &e.grad_norm, &e.tokens_per_s}) *v = r.get<double>();
  }
  if (st.log.size() != static_cast<std::size_t>(st.step)) r.fail("train log length differs from the step");
  const auto n_probes = r.count(8 + 4 * 8 + 3 * 8 + 8);
  st.probes.resize(n_probes);
  for (ProbeRecord& p : st.probes) {
    p.step = static_cast<int>(r.get<std::int64_t>());
    for (double* v : {&p.loss, &p.accuracy, &p.first_accuracy, &p.query_accuracy}) *v = r.get<double>();
    p.scored = static_cast<long>(r.get<std::int64_t>());
    p.first_scored = static_cast<long>(r.get<std::int64_t>());
    p.query_scored = static_cast<long>(r.get<std::int64_t>());
    p.layers.resize(r.count(2 * 6 * 8 + 3 * 8 + 8));
    for (LayerProbe& l : p.layers) {
      l.state = get_state_metrics(r);
      l.mid = get_state_metrics(r);
      for (double* v : {&l.sink.sink_rate, &l.sink.attn_to_0, &l.sink.attn_to_1, &l.sink.sink_1}) *v = r.get<double>();
      l.heads.resize(r.count(kHeadMetrics.size() * 8));
      for (HeadAttention& h : l.heads)
        for (const HeadMetric& m : kHeadMetrics) h.*m.field = r.get<double>();
    }
  }
  if (!r.at_end()) r.fail("trailing bytes");
  return st;
}

void write_checkpoint(const fs::path& dir, const std::string& fingerprint, const TrainState& state) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw RunError("cannot create " + dir.string() + ": " + ec.message());
  write_file_atomic(dir / kIncoming, encode_checkpoint(fingerprint, state));
  // Keep the previous checkpoint: if the newest turns out unreadable, the one before still is.
  if (fs::exists(dir / kNewest)) {
    fs::rename(dir / kNewest, dir / kPrevious, ec);
    if (ec) throw RunError("cannot rename " + (dir / kNewest).string() + ": " + ec.message());
  }
  fs::rename(dir / kIncoming, dir / kNewest, ec);
  if (ec) throw RunError("cannot rename " + (dir / kIncoming).string() + ": " + ec.message());
}

LoadedCheckpoint load_latest_checkpoint(const fs::path& dir, const FingerprintCheck& fits, int steps,
                                        const std::string& option) {
  LoadedCheckpoint best;
  std::vector<std::string> reasons;
  // next.ckpt is complete when present (it was renamed into place) but may not have been promoted
  // to state.ckpt before a kill.
  for (const char* name : {kNewest, kIncoming, kPrevious}) {
    const fs::path file = dir / name;
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    best.found = true;
    try {
      TrainState st = decode_checkpoint(read_all(file), fits, steps, file.string());
      if (best.file.empty() || st.step > best.state.step) {
        best.state = std::move(st);
        best.file = file;
      }
    } catch (const UsageError& e) {
      reasons.emplace_back(e.what());
    }
  }
  if (best.found && best.file.empty()) {
    std::string all;
    for (const auto& r : reasons) all += (all.empty() ? "" : "; ") + r;
    throw UsageError(option, "no usable checkpoint in '" + dir.string() + "': " + all);
  }
  best.skipped = std::move(reasons);
  return best;
}

}  // namespace p0sim::sim
