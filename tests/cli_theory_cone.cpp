// `p0sim theory cone` run as a program: determinism across threads, bad input, atomic output,
// and the --config round trip through the resolved config it writes.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

// Named after the file: the test files are compiled in batches (CMake's unity build).
namespace cli_theory_cone_test {

namespace fs = std::filesystem;

namespace {

struct Run {
  int code;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("p0sim_cli_theory_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

Run run(const TempDir& dir, const std::string& args) {
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string cmd = "cd '" + dir.path().string() + "' && '" P0SIM_BINARY "' theory cone " + args + " >'" +
                          out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  Run r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

const std::string kSmall = "--model gauss --d 4,16 --T 1,2,9 --m 0,0.5 --trials 300 --seed 11 ";

}  // namespace

TEST_CASE("theory cone writes identical CSV bytes with 1 and 2 threads", "[cli][theory]") {
  TempDir dir;
  const Run a = run(dir, kSmall + "--threads 1 --out one.csv");
  const Run b = run(dir, kSmall + "--threads 2 --out two.csv");
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  const std::string csv = slurp(dir / "one.csv");
  REQUIRE(csv == slurp(dir / "two.csv"));
  CHECK(csv.rfind("model,mask,d,T,t,theta,mu,sigma,m,heads,quantity,closed_form,mc_mean,mc_ci99_low,mc_ci99_high,z,"
                  "trials,seed\n",
                  0) == 0);
  CHECK(csv.find("gauss,causal,16,9,8,,,1,0.5,1,p0_gap,") != std::string::npos);
  CHECK(a.out.find("gap_cf") != std::string::npos);  // the table
  CHECK(fs::exists(dir / "one.config.toml"));
}

TEST_CASE("theory cone reproduces its CSV from the resolved config it wrote", "[cli][theory]") {
  TempDir dir;
  REQUIRE(run(dir, "--model cap --d 3,8 --T 5 --theta 0.5,3.14159 --positions 0,1,T-1 --trials 200 --out a.csv").code ==
          0);
  const Run again = run(dir, "--config a.config.toml --out b.csv");
  REQUIRE(again.code == 0);
  CHECK(slurp(dir / "a.csv") == slurp(dir / "b.csv"));
  // Positions T-1 and >= T: only 0, 1, 4 appear for T = 5.
  const std::string csv = slurp(dir / "a.csv");
  CHECK(csv.find("cap,causal,3,5,4,") != std::string::npos);
  CHECK(csv.find("cap,causal,3,5,2,") == std::string::npos);
}

TEST_CASE("theory cone takes --estimator from a TOML config, records it, and reproduces the CSV from it",
          "[cli][theory]") {
  TempDir dir;
  std::ofstream(dir / "radial.toml") << "model = \"gauss\"\nd = [3, 16]\nT = 9\nheads = 1\nm = 0.5\ntrials = 500\n"
                                        "estimator = \"radial\"\n";
  const Run a = run(dir, "--config radial.toml --threads 1 --out a.csv");
  REQUIRE(a.code == 0);
  const std::string cfg = slurp(dir / "a.config.toml");
  CHECK(cfg.find("\nestimator = \"radial\"\n") != std::string::npos);
  REQUIRE(run(dir, "--config a.config.toml --threads 2 --out b.csv").code == 0);
  CHECK(slurp(dir / "a.csv") == slurp(dir / "b.csv"));
  // The command line wins over the file; full is another estimator, so other numbers.
  REQUIRE(run(dir, "--config radial.toml --estimator full --out c.csv").code == 0);
  CHECK(slurp(dir / "c.config.toml").find("\nestimator = \"full\"\n") != std::string::npos);
  CHECK(slurp(dir / "c.csv") != slurp(dir / "a.csv"));
}

TEST_CASE("theory cone refuses to overwrite without --force", "[cli][theory]") {
  TempDir dir;
  REQUIRE(run(dir, kSmall + "--out x.csv").code == 0);
  const std::string before = slurp(dir / "x.csv");
  const Run again = run(dir, kSmall + "--heads 2 --out x.csv");
  CHECK(again.code == 2);
  CHECK(again.err.find("--out") != std::string::npos);
  CHECK(slurp(dir / "x.csv") == before);
  CHECK(run(dir, kSmall + "--heads 2 --out x.csv --force").code == 0);
  CHECK(slurp(dir / "x.csv") != before);
}

TEST_CASE("theory cone rejects bad input with exit 2, one line naming the option, and no output", "[cli][theory]") {
  const auto [args, option] = GENERATE(table<std::string, std::string>({
      {"--model gauss --d 1 --T 4 --trials 10", "--d"},
      {"--model gauss --d 4 --T 0 --trials 10", "--T"},
      {"--model cap --d 4 --T 4 --theta 0 --trials 10", "--theta"},
      {"--model cap --d 4 --T 4 --theta 3.2 --trials 10", "--theta"},
      {"--model gauss --d 4 --T 4 --sigma 0 --trials 10", "--sigma"},
      {"--model axis --d 4 --T 4 --sigma -1 --trials 10", "--sigma"},
      {"--model gauss --d 4 --T 4 --trials 1", "--trials"},
      {"--model cone --d 4 --T 4 --trials 10", "--model"},
      {"--d 4 --T 4 --trials 10", "--model"},
      {"--model gauss --d 6 --T 4 --heads 4 --trials 10", "--heads"},
      {"--model gauss --d 4 --T 4 --positions 1,x --trials 10", "--positions"},
      {"--model gauss --d 4:2:x2 --T 4 --trials 10", "--d"},
      {"--model gauss --d 4 --T 4 --threads 0 --trials 10", "--threads"},
      {"--model cap --d 4 --T 4 --estimator radial --trials 10", "--estimator"},
      {"--model axis --d 4 --T 4 --estimator radial --trials 10", "--estimator"},
      {"--model gauss --d 4 --T 4 --estimator fast --trials 10", "--estimator"},
  }));
  TempDir dir;
  CAPTURE(args);
  const Run r = run(dir, args + " --out bad.csv");
  CHECK(r.code == 2);
  CHECK(r.err.find(option) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(dir / "bad.csv"));
  CHECK_FALSE(fs::exists(dir / "bad.config.toml"));
  // Nothing else either (no temporary file left behind).
  CHECK(fs::is_empty(dir.path()));
}

TEST_CASE("theory cone rejects an output path that cannot be written", "[cli][theory]") {
  TempDir dir;
  const Run missing = run(dir, kSmall + "--out no/such/dir/x.csv");
  CHECK(missing.code == 2);
  CHECK(missing.err.find("--out") != std::string::npos);
  fs::create_directory(dir / "ro");
  fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  const Run readonly = run(dir, kSmall + "--out ro/x.csv");
  if (::geteuid() != 0) {  // root may write anywhere
    CHECK(readonly.code == 2);
    CHECK(readonly.err.find("--out") != std::string::npos);
  }
  fs::permissions(dir / "ro", fs::perms::owner_all);
}

}  // namespace cli_theory_cone_test
