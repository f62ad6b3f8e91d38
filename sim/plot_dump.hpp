#pragma once
// What `p0sim plot` needs beyond trace.csv: the probe batch's mean attention pattern of every head
// and the mean hidden-state norm at every position, for the trained weights at the end of a run.
// Legend: N probe rows, P positions the model sees, H heads, L layers.
#include <filesystem>

#include "sim/model.hpp"
#include "sim/train.hpp"

namespace p0sim::sim {

// Runs the fixed probe batch (the same rows as the Prober's) through a copy of `trained` and writes
//   dir/attn_mean.npy        (L,H,P,P) float32: A[l,h,query,key] averaged over the N rows;
//   dir/norm_by_position.npy (L+1,P)   float32: mean over rows of ||h_t||, row 0 the embeddings,
//                                               row l+1 the residual stream after block l.
// Creates dir. Throws RunError on I/O failure.
void write_probe_dump(const std::filesystem::path& dir, const Model<float>& trained, const TrainConfig& c);

}  // namespace p0sim::sim
