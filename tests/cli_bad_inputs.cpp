// Every subcommand, one table of bad inputs run through the binary. Each must end with
// exit 2 (bad input) or 1 (a failed run), exactly one line on stderr naming the option or file,
// no signal, and nothing written anywhere: the scratch tree (fixtures and output locations) is
// listed with every file's size and modification time before and after each case.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <regex>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "sim/npy.hpp"
#include "tests/test_support.hpp"

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace cli_bad_inputs_test {

namespace fs = std::filesystem;

namespace {

const p0sim::test::ScratchRoot kScratch("p0sim_cli_bad_");

struct Outcome {
  bool exited = false;  // false: ended by a signal
  int code = -1;
  std::string err;
};

// Runs p0sim in `cwd`; stderr is captured outside the scratch tree so it does not count as output.
Outcome run_in(const fs::path& cwd, const std::string& args) {
  const fs::path err = fs::temp_directory_path() / ("p0sim_bad_stderr_" + std::to_string(::getpid()) + ".txt");
  const std::string cmd =
      "cd '" + cwd.string() + "' && exec " + std::string(P0SIM_BINARY) + " " + args + " > /dev/null 2> " + err.string();
  const int status = std::system(cmd.c_str());
  std::ifstream in(err);
  Outcome o;
  o.err.assign(std::istreambuf_iterator<char>(in), {});
  o.exited = WIFEXITED(status) != 0;
  o.code = o.exited ? WEXITSTATUS(status) : -1;
  fs::remove(err);
  return o;
}

// Every path below root; files with their size and modification time.
std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> listing(const fs::path& root) {
  std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    out[e.path().string()] = e.is_regular_file() ? std::pair{e.file_size(), e.last_write_time()}
                                                 : std::pair{std::uintmax_t{0}, fs::file_time_type{}};
  return out;
}

// Paths added, removed or changed between two listings ("" when none).
template <typename Listing>
std::string changes(const Listing& before, const Listing& after) {
  std::string out;
  for (const auto& [path, meta] : after)
    if (!before.count(path) || before.at(path) != meta)
      out += (before.count(path) ? "changed " : "added ") + path + "\n";
  for (const auto& [path, meta] : before)
    if (!after.count(path)) out += "removed " + path + "\n";
  return out;
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const std::string kTinyTrain =
    "train --vocab 8 --d-model 16 --heads 2 --d-ff 32 --seq-len 8 --batch 4 --steps 12 --probe-every 4 "
    "--checkpoint-every 4 --seed 3";

const std::string kTinyExperiment = R"(vocab = 16
d-model = 16
heads = 2
d-ff = 32
seq-len = 8
batch = 4
steps = 4
probe-every = 2
probe-batch = 8
task = "firstrecall"
triggers = 2

[experiment]
main = "main"
control = "bidir"

[variants.main]

[variants.bidir]
mask = "prefix-bidirectional"
)";

struct BadCase {
  std::string args;   // run from the case's working directory W (outputs go there)
  std::string names;  // the option or file the message must name
  int code = 2;
};

}  // namespace

TEST_CASE("bad input across every subcommand: one line naming the option or file, exit 2 or 1, nothing written",
          "[cli][bad-input]") {
  const fs::path F = kScratch.fresh_dir("fixtures");
  const fs::path W = kScratch.fresh_dir("work");
  const std::string f = F.string() + "/";

  // A small finished run with checkpoints, and broken copies of it.
  REQUIRE(run_in(F, kTinyTrain + " --out run").code == 0);
  REQUIRE(fs::exists(F / "run" / "checkpoint" / "state.ckpt"));
  REQUIRE(fs::exists(F / "run" / "checkpoint" / "state.prev.ckpt"));
  fs::create_directory(F / "empty");
  write_text(F / "short.txt", "one short document\n\nand another\n");
  for (const char* name : {"corrupt", "foreign", "w_missing", "w_shaped", "w_cfg", "no_weights"})
    fs::copy(F / "run", F / name, fs::copy_options::recursive);
  for (const char* name : {"corrupt", "foreign"}) fs::remove(F / name / "summary.json");
  for (const char* ckpt : {"state.ckpt", "state.prev.ckpt"}) {
    std::string bytes = slurp(F / "corrupt" / "checkpoint" / ckpt);
    bytes[bytes.size() / 2] ^= 0x5a;
    write_text(F / "corrupt" / "checkpoint" / ckpt, bytes);
  }
  {  // same run directory, other seed: the checkpoints belong to another configuration
    std::string cfg = slurp(F / "foreign" / "config.toml");
    const auto at = cfg.find("seed = 3");
    REQUIRE(at != std::string::npos);
    write_text(F / "foreign" / "config.toml", cfg.replace(at, 8, "seed = 4"));
  }
  fs::remove(F / "w_missing" / "weights" / "norm_f.weight.npy");
  fs::remove_all(F / "no_weights" / "weights");
  std::vector<float> floats(2 * 9, 1.0f);
  p0sim::sim::write_npy(F / "w_shaped" / "weights" / "lm_head.npy", floats.data(), {2, 9});
  write_text(F / "w_cfg" / "weights" / "config.json", "{ not json");

  // Token files for eval (the run has V = 8, T = 8: rows of 9 tokens).
  std::vector<std::int32_t> ok(2 * 9, 1), high(2 * 9, 1), negative(2 * 9, 1);
  high[13] = 8;
  negative[4] = -1;
  p0sim::sim::write_npy(F / "ok.npy", ok.data(), {2, 9});
  p0sim::sim::write_npy(F / "high.npy", high.data(), {2, 9});
  p0sim::sim::write_npy(F / "negative.npy", negative.data(), {2, 9});
  p0sim::sim::write_npy(F / "float.npy", floats.data(), {2, 9});
  p0sim::sim::write_npy(F / "flat.npy", ok.data(), {18});
  p0sim::sim::write_npy(F / "short_rows.npy", ok.data(), {9, 2});
  const std::string good_npy = slurp(F / "ok.npy");
  write_text(F / "truncated.npy", good_npy.substr(0, good_npy.size() - 7));
  write_text(F / "garbage.npy", "\x93NUMPY\x01\x00\x10\x00{'descr': <i4}  \n");
  write_text(F / "not_npy.npy", "just some text, not an array\n");
  {
    std::string fortran = good_npy;
    fortran.replace(fortran.find("False"), 5, "True ");
    write_text(F / "fortran.npy", fortran);
    std::string big_endian = good_npy;
    big_endian.replace(big_endian.find("<i4"), 3, ">i4");
    write_text(F / "big_endian.npy", big_endian);
    std::string huge = good_npy;
    huge.replace(huge.find("(2, 9)"), 6, "(99999999999, 9)");
    write_text(F / "huge_shape.npy", huge);
  }

  // Config files.
  write_text(F / "malformed.toml", "vocab = = 3\n");
  write_text(F / "unterminated.toml", "task = \"markov\nsteps = 3\n");
  // A table header whose key starts with a character no key can start with (a typo for "[x]").
  write_text(F / "header_bad_key.toml", "steps = 3\n[=x]\n");
  write_text(F / "unknown_key.toml", "learning_rate = 0.1\n");
  write_text(F / "wrong_type.toml", "batch = \"many\"\n");
  write_text(F / "section.toml", "[model]\nvocab = 8\n");
  write_text(F / "resume_key.toml", "resume = \"" + (F / "run").string() + "\"\n");
  write_text(F / "cone_unknown.toml", "dims = 4\n");
  write_text(F / "experiment.toml", kTinyExperiment);
  write_text(F / "experiment_unknown.toml", kTinyExperiment + "[variants.x]\nlearning-rate = 0.1\n");
  write_text(F / "experiment_bad_value.toml", "checkpoint-every = -3\n" + kTinyExperiment);
  write_text(F / "experiment_malformed.toml", "vocab =\n" + kTinyExperiment);
  write_text(F / "experiment_bad_header.toml", kTinyExperiment + "[[[variants.x]]]\n");
  write_text(F / "experiment_no_control.toml", "vocab = 16\n[variants.main]\n");
  write_text(F / "experiment_one_seed.toml",
             std::regex_replace(kTinyExperiment, std::regex("\\[experiment\\]\n"), "[experiment]\nseeds = 1\n"));
  fs::create_directories(F / "plain");
  write_text(F / "plain" / "notes.csv", "a,b\n1,2\n");

  const std::string cone = "theory cone --model gauss --d 4 --T 4 --trials 10 --out o.csv";
  const std::string circuit = "theory circuit --d 8 --T 4 --sequences 8 --models 2 --out o.csv";
  const std::string train = "train --steps 2 --out run";
  const std::string eval = "eval --weights " + f + "run/weights --out ev";
  const std::string experiment = "experiment --seeds 2 --out e --config " + f + "experiment.toml";
  const std::string scale_p0 = "scale-p0 " + f + "run --out o.csv";

  const std::vector<BadCase> cases = {
      // theory cone
      {"theory cone --model gauss --d 1 --T 4 --trials 10 --out o.csv", "--d"},
      {"theory cone --model cone --d 4 --T 4 --trials 10 --out o.csv", "--model"},
      {"theory cone --model cap --estimator radial --d 4 --T 4 --trials 10 --out o.csv", "--estimator"},
      {"theory cone --model gauss --estimator chain --d 4 --T 4 --trials 10 --out o.csv", "--estimator"},
      {"theory cone --model gauss --d 4 --T 4 --trials abc --out o.csv", "--trials"},
      {"theory cone --model gauss --d 4 --T 4 --trials 1 --out o.csv", "--trials"},
      {"theory cone --model cap --d 4 --T 4 --theta 3.2 --trials 10 --out o.csv", "--theta"},
      {cone + " --seed -1", "--seed"},
      {cone + " --threads 0", "--threads"},
      {cone + " --positions 1,x", "--positions"},
      {cone + " --d 8", "--d"},  // given twice
      {"theory cone --model gauss --d 4 --T 4 --trials 10 --out no/such/dir/o.csv", "--out"},
      {cone + " --config " + f + "malformed.toml", "--config"},
      {cone + " --config " + f + "cone_unknown.toml", "dims"},
      {cone + " --config " + f + "missing.toml", "--config"},
      // theory circuit
      {"theory circuit --d 2 --T 4 --sequences 8 --models 2 --out o.csv", "--d"},
      {circuit + " --mask sideways", "--mask"},
      {circuit + " --beta 0", "--beta"},
      {circuit + " --heads 3", "--heads"},
      {"theory circuit --d 8 --T 4 --sequences many --models 2 --out o.csv", "--sequences"},
      {circuit + " --seed x", "--seed"},
      {circuit + " --config " + f + "section.toml", "--config"},
      // train
      {train + " --heads 3", "--heads"},
      {train + " --lr nan", "--lr"},
      {"train --steps -5 --out run", "--steps"},
      {train + " --batch two", "--batch"},
      {train + " --task copy", "--task"},
      {train + " --task firstrecall-lookup --trigger-prob 0.4", "--trigger-prob"},  // facts + queries + triggers <= 1
      {train + " --task firstrecall-lookup --vocab 49", "--vocab"},                 // lookup's 46 + 4 triggers
      {train + " --task text --vocab 256 --corpus " + f + "no_such_corpus", "--corpus"},
      {train + " --task text --vocab 256 --corpus " + f + "empty", "--corpus"},      // a directory of no files
      {train + " --task text --vocab 256 --corpus " + f + "short.txt", "--corpus"},  // fewer bytes than a window
      // unreadable, even for root: a regular file whose read fails (EIO), and a device
      {train + " --task text --vocab 256 --corpus /proc/self/mem", "--corpus"},
      {train + " --task text --vocab 256 --corpus /dev/null", "--corpus"},
      {train + " --task text --corpus /usr/share/games/fortunes", "--vocab"},  // bytes need vocab 256
      {train + " --task backcopy --bigrams corpus", "--vocab"},                // counted byte bigrams need vocab 256
      {train + " --task backcopy --bigrams corpus --vocab 256 --corpus " + f + "no_such_corpus", "--corpus"},
      {train + " --optimizer adam", "--optimizer"},
      {train + " --optimizer sgd --momentum 1", "--momentum"},
      {train + " --weight-decay-group norms", "--weight-decay-group"},
      {train + " --attn relu2", "--attn"},
      {train + " --init xavier", "--init"},
      {train + " --task text --vocab 256 --window middle", "--window"},
      {train + " --d-model 12 --heads 4 --pos rope", "--pos"},
      {train + " --checkpoint-every -1", "--checkpoint-every"},
      {train + " --seed 1.5", "--seed"},
      {train + " --config " + f + "malformed.toml", "--config"},
      {train + " --config " + f + "unterminated.toml", "--config"},
      {train + " --config " + f + "header_bad_key.toml", "header_bad_key.toml:2"},
      {train + " --config " + f + "unknown_key.toml", "learning_rate"},
      {train + " --config " + f + "wrong_type.toml", "batch"},
      {train + " --config " + f + "section.toml", "--config"},
      {"train --config " + f + "resume_key.toml", "--config"},
      {"train --steps 2 --out " + f + "run", "--out"},  // not empty, neither --resume nor --force
      {"train --steps 2 --out /nonexistent_p0sim_dir/run", "--out"},
      {"train --resume " + f + "run --force", "--resume"},
      {"train --resume " + f + "run --out run", "--resume"},
      {"train --resume " + f + "run --config " + f + "section.toml", "--resume"},
      {"train --resume " + f + "no_such_run", "--resume"},
      {"train --resume " + f + "empty", "--resume"},
      {"train --resume " + f + "corrupt", "checksum"},
      {"train --resume " + f + "foreign", "different training configuration"},
      {"train --resume " + f + "foreign --steps -1", "--steps"},
      // eval
      {eval + " --tokens " + f + "high.npy", "--tokens"},
      {eval + " --tokens " + f + "negative.npy", "--tokens"},
      {eval + " --tokens " + f + "float.npy", "float.npy"},
      {eval + " --tokens " + f + "flat.npy", "flat.npy"},
      {eval + " --tokens " + f + "short_rows.npy", "short_rows.npy"},
      {eval + " --tokens " + f + "truncated.npy", "truncated.npy"},
      {eval + " --tokens " + f + "garbage.npy", "garbage.npy"},
      {eval + " --tokens " + f + "not_npy.npy", "not_npy.npy"},
      {eval + " --tokens " + f + "fortran.npy", "fortran.npy"},
      {eval + " --tokens " + f + "big_endian.npy", "big_endian.npy"},
      {eval + " --tokens " + f + "huge_shape.npy", "huge_shape.npy"},
      {eval + " --tokens " + f + "none.npy", "--tokens"},
      {eval + " --tokens " + f + "ok.npy --threads 0", "--threads"},
      {"eval --tokens " + f + "ok.npy --out ev", "--weights"},
      {"eval --weights " + f + "w_missing/weights --tokens " + f + "ok.npy --out ev", "norm_f.weight.npy"},
      {"eval --weights " + f + "w_shaped/weights --tokens " + f + "ok.npy --out ev", "lm_head.npy"},
      {"eval --weights " + f + "w_cfg/weights --tokens " + f + "ok.npy --out ev", "config.json"},
      {eval + " --tokens " + f + "ok.npy --out /nonexistent_p0sim_dir/ev", "--out"},
      // experiment
      {"experiment --seeds 1 --out e --config " + f + "experiment.toml", "--seeds"},
      {experiment + " --variants main,nope", "--variants"},
      {experiment + " --threads 0", "--threads"},
      {experiment + " --resume --force", "--resume"},
      {"experiment --seeds 2 --resume --out " + f + "empty", "--resume"},
      {"experiment --seeds 2 --resume --out " + f + "run", "--resume"},
      {"experiment --seeds 2 --out e --config " + f + "experiment_unknown.toml", "learning-rate"},
      {"experiment --seeds 2 --out e --config " + f + "experiment_bad_value.toml", "checkpoint-every"},
      {"experiment --seeds 2 --out e --config " + f + "experiment_malformed.toml", "--config"},
      {"experiment --seeds 2 --out e --config " + f + "experiment_bad_header.toml", "--config"},
      {"experiment --seeds 2 --out e --config " + f + "experiment_no_control.toml", "--config"},
      {"experiment --seeds 2 --config " + f + "experiment.toml", "--out"},
      {"experiment --out e --config " + f + "experiment_one_seed.toml", "seeds must be an integer in 2..10000"},
      // plot
      {"plot " + f + "no_such_dir", "no_such_dir"},
      {"plot " + f + "empty", "empty"},
      {"plot " + f + "plain/notes.csv", "notes.csv"},
      {"plot " + f + "run --out /nonexistent_p0sim_dir/plots", "--out"},
      {"plot", "DIR"},
      // report
      {"report " + f + "no_such_dir", "no_such_dir"},
      {"report " + f + "empty", "empty"},
      {"report " + f + "run --row 1048576", "--row"},
      {"report " + f + "run --row -1", "--row"},
      {"report " + f + "run --out /nonexistent_p0sim_dir/r.html", "--out"},
      {"report", "DIR"},
      // scale-p0
      {"scale-p0 " + f + "no_such_dir --out o.csv", "RUN_DIR"},
      {"scale-p0 " + f + "empty --out o.csv", "RUN_DIR"},       // no config.toml
      {"scale-p0 " + f + "no_weights --out o.csv", "RUN_DIR"},  // no weights/
      {"scale-p0 " + f + "w_missing --out o.csv", "norm_f.weight.npy"},
      {"scale-p0 --out o.csv", "RUN_DIR"},
      {"scale-p0 " + f + "run", "--out"},
      {scale_p0 + " --factors 0", "--factors"},
      {scale_p0 + " --factors 1,-2", "--factors"},
      {scale_p0 + " --factors nan", "--factors"},
      {scale_p0 + " --factors inf", "--factors"},
      {scale_p0 + " --factors 1,x", "--factors"},
      {scale_p0 + " --layers 2", "--layers"},  // the run has blocks 0 and 1
      {scale_p0 + " --layers -1", "--layers"},
      {scale_p0 + " --rows 1", "--rows"},
      {"scale-p0 " + f + "run --out /nonexistent_p0sim_dir/o.csv", "--out"},
      {"scale-p0 " + f + "run --out " + f + "plain/notes.csv", "--out"},  // exists, no --force
  };
  REQUIRE(cases.size() >= 40);
  std::cerr << "bad-input table: " << cases.size() << " cases\n";

  int checked = 0;
  for (const BadCase& c : cases) {
    CAPTURE(c.args);
    const auto before = listing(kScratch.root());
    const Outcome o = run_in(W, c.args);
    CAPTURE(o.err);
    REQUIRE(o.exited);  // no signal, no sanitizer abort
    CHECK(o.code == c.code);
    CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
    CHECK(o.err.find(c.names) != std::string::npos);
    CHECK(changes(before, listing(kScratch.root())) == "");  // nothing created, nothing rewritten
    if (!fs::is_empty(W)) kScratch.fresh_dir("work");        // so one failure does not spill into the next case
    ++checked;
  }
  CHECK(checked == static_cast<int>(cases.size()));
}

}  // namespace cli_bad_inputs_test
