#pragma once
// Checkpoints of a training run: everything `p0sim train --resume` needs to continue a
// killed run and finish with the same bytes as a run that never stopped.
//
// RUN_DIR/checkpoint/ holds state.ckpt (the newest) and state.prev.ckpt (the one before). A new
// checkpoint is written whole to next.ckpt (temporary name, fsync, rename), then state.ckpt is
// renamed to state.prev.ckpt and next.ckpt to state.ckpt, so a kill at any instant leaves at least
// one complete checkpoint. The loader takes the valid file with the most steps and says why it
// passed over any other.
//
// File layout (little endian):
//   "P0SIMCKP" | u32 format version | u32 engine version | u64 payload bytes | u64 FNV-1a-64 of the
//   payload | payload
// Payload: the run's fingerprint (the caller's text naming everything that changes what the run
// computes; a checkpoint of another fingerprint is refused), the finished step count, the RNG streams' positions (data
// stream 0 at batch index = step; probe stream 1 at its fixed batch 0), wall seconds so far,
// the optimiser's step count, the flat parameters and its two state buffers (float32), the train log and the
// probe records so far (raw fields; derived claims are recomputed at the end).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "sim/train.hpp"

namespace p0sim::sim {

// 2: probe records keep the query accuracy; 3: the fingerprint is the caller's (the run options');
// 4: probes keep Sink_1 (per layer and per head) and the massive ratio away from P0; 5: every head
// metric of kHeadMetrics (attention to 0 from the other queries, |W_o v_0|).
inline constexpr std::uint32_t kCheckpointVersion = 5;

// The checkpoint directory of a run directory.
std::filesystem::path checkpoint_dir(const std::filesystem::path& run_dir);

// Whether a checkpoint written under the stored fingerprint may continue the caller's run. The
// caller decides: the fingerprint's text is its own. Given a string, the fingerprints must be equal.
using FingerprintCheck = std::function<bool(const std::string& stored)>;

// Serialises `state` under `fingerprint`; the inverse checks magic, version, size, checksum, that
// the fingerprint fits and the step is within 0..steps, throwing UsageError(`where`, reason)
// otherwise.
std::string encode_checkpoint(const std::string& fingerprint, const TrainState& state);
TrainState decode_checkpoint(const std::string& bytes, const FingerprintCheck& fits, int steps,
                             const std::string& where);
TrainState decode_checkpoint(const std::string& bytes, const std::string& fingerprint, int steps,
                             const std::string& where);

// Writes a new checkpoint into `dir` (created), keeping the previous one. RunError on I/O failure.
void write_checkpoint(const std::filesystem::path& dir, const std::string& fingerprint, const TrainState& state);

// The newest usable checkpoint in `dir`. `found` is false when the directory holds no checkpoint
// file at all (a run killed before its first checkpoint starts again from step 0). When files
// exist but none is usable: UsageError(option, reasons of each). Files passed over for a usable
// older one are listed in `skipped` (one "file: reason" each) so the caller can warn.
struct LoadedCheckpoint {
  bool found = false;
  TrainState state;
  std::filesystem::path file;
  std::vector<std::string> skipped;
};
LoadedCheckpoint load_latest_checkpoint(const std::filesystem::path& dir, const FingerprintCheck& fits, int steps,
                                        const std::string& option);

}  // namespace p0sim::sim
