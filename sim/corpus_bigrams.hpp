#pragma once
// Bigram rows counted from a byte corpus, for markov and backcopy with --bigrams corpus
// (DESIGN.md section 4), and the repair that keeps backcopy on them from being trapped.
#include <cstddef>
#include <vector>

#include "sim/corpus.hpp"

namespace p0sim::sim {

// (256,256) row-major: the training split read as one cyclic stream of bytes (its last byte followed
// by its first, so every byte that occurs leads somewhere); a byte that never occurs gets the
// unigram law (train_frequency) as its row, never reached from an occurring byte.
std::vector<double> count_bigrams(const Corpus& corpus);

// Backcopy on counted bigrams, watched at its non-trigger bytes, moves a -> c (c not a trigger) or
// returns to a after a trigger. A closed set of bytes there (no way out but through triggers, which
// lead back) traps the process: a byte only ever followed by triggers (a, trigger, a, ...), or one
// followed only by itself and triggers, or a larger closed set. The chain must have one recurrent
// class for its stationary law to be unique. So, until one closed class is left: keep the closed
// class of the largest unigram mass among those of two or more bytes (the text's own cycle) and give
// every byte of the other closed classes the unigram law as its row, as a byte that never occurs
// (that row reaches every byte, so the next round merges them). In the fortunes, two bytes of one
// UTF-8 character, each occurring once. Returns the bytes whose rows changed.
std::vector<std::size_t> untrap(std::vector<double>& P, const std::vector<char>& is_trigger,
                                const std::vector<double>& unigram);

}  // namespace p0sim::sim
