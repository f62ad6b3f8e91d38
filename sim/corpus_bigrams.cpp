#include "sim/corpus_bigrams.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace p0sim::sim {

std::vector<double> count_bigrams(const Corpus& corpus) {
  const std::string& bytes = corpus.train.bytes;
  const std::size_t V = corpus.train_frequency.size();
  std::vector<double> counts(V * V, 0.0), P(V * V, 0.0);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto a = static_cast<unsigned char>(bytes[i]), b = static_cast<unsigned char>(bytes[(i + 1) % bytes.size()]);
    counts[a * V + b] += 1.0;
  }
  for (std::size_t a = 0; a < V; ++a) {
    const double total = std::accumulate(&counts[a * V], &counts[a * V] + V, 0.0);
    for (std::size_t b = 0; b < V; ++b)
      P[a * V + b] = total > 0.0 ? counts[a * V + b] / total : corpus.train_frequency[b];
  }
  return P;
}

std::vector<std::size_t> untrap(std::vector<double>& P, const std::vector<char>& is_trigger,
                                const std::vector<double>& unigram) {
  const std::size_t V = unigram.size();
  auto node = [&](std::size_t a) { return !is_trigger[a] && unigram[a] > 0.0; };
  std::vector<std::size_t> changed;
  for (;;) {
    std::vector<std::vector<char>> reach(V, std::vector<char>(V, 0));  // reach[a][c]: a -> ... -> c
    for (std::size_t a = 0; a < V; ++a) {
      if (!node(a)) continue;
      std::vector<std::size_t> frontier = {a};
      reach[a][a] = 1;
      while (!frontier.empty()) {
        const std::size_t b = frontier.back();
        frontier.pop_back();
        for (std::size_t c = 0; c < V; ++c)
          if (node(c) && !reach[a][c] && P[b * V + c] > 0.0) reach[a][c] = 1, frontier.push_back(c);
      }
    }
    // a lies in a closed class when everything it reaches reaches it back
    std::vector<char> closed(V, 0);
    for (std::size_t a = 0; a < V; ++a) {
      if (!node(a)) continue;
      closed[a] = 1;
      for (std::size_t c = 0; c < V && closed[a]; ++c)
        if (reach[a][c] && !reach[c][a]) closed[a] = 0;
    }
    std::size_t keep = V, classes = 0;  // a member of the kept class
    double keep_mass = -1.0;
    for (std::size_t a = 0; a < V; ++a) {
      if (!closed[a]) continue;
      bool first = true;  // a is its class's lowest byte
      double mass = 0.0;
      std::size_t size = 0;
      for (std::size_t c = 0; c < V; ++c)
        if (closed[c] && reach[a][c]) {
          if (c < a) first = false;
          mass += unigram[c];
          ++size;
        }
      if (!first) continue;
      ++classes;
      if (size >= 2 && mass > keep_mass) keep = a, keep_mass = mass;
    }
    if (classes <= 1 && keep < V) return changed;
    bool any = false;
    for (std::size_t a = 0; a < V; ++a)
      if (closed[a] && (keep == V || !reach[keep][a])) {
        std::copy(unigram.begin(), unigram.end(), &P[a * V]);
        changed.push_back(a);
        any = true;
      }
    if (!any) return changed;
  }
}

}  // namespace p0sim::sim
