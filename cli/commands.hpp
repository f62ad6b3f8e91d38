#pragma once
// Each area registers its subcommands on the top-level app; the callbacks do the work and
// throw UsageError / RunError, which run_main() turns into one line and an exit code.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>

namespace p0sim::cli {

void add_theory_commands(CLI::App& app);            // theory cone, theory circuit
void add_sim_commands(CLI::App& app);               // train, eval
void add_theory_circuit_command(CLI::App& theory);  // theory circuit (called by add_theory_commands)
void add_experiment_command(CLI::App& app);         // experiment: variants x seeds, verdict
void add_plot_command(CLI::App& app);               // plot: gnuplot PNGs of a run, experiment or theory CSV
void add_report_command(CLI::App& app);             // report: one self-contained HTML page of a run, experiment, sweep
void add_sweep_commands(CLI::App& app);             // sweep (grid x seeds, threads/shards/MPI), sweep-merge
void add_scale_p0_command(CLI::App& app);           // scale-p0: loss and attention along a scaled P0 residual

// Compiler, flags and Eigen SIMD instruction sets in use.
std::string version_text();

// Adds `--config FILE` (TOML, keys = option names without dashes) to a subcommand and makes
// `run` its callback. Before `run`, values from the file fill every option not given on the
// command line; unknown keys, sections and malformed TOML are bad input (exit 2).
// CLI11 2.1 reads config files only on the top-level app, so subcommands apply their own here.
// Options that may come from the file must not be ->required(): check them in `run`.
void add_config_option(CLI::App& sub, std::function<void()> run);
// Fills every option of `sub` not given on the command line from the TOML file `path` (the
// --config rules); errors name `option`. Also used by commands that read their own --config (sweep).
void apply_config_file(CLI::App& sub, const std::string& path, const std::string& option = "--config");

// The resolved configuration of a parsed subcommand, as TOML that `--config` accepts back
// (without --out, --force and --resume: a replay names its output again).
std::string resolved_config(const CLI::App& sub);

// Option check: a finite number, with an optional lower bound (> 0 or >= 0); the message names
// what is accepted.
enum class FiniteBound { any, positive, nonnegative };
CLI::Validator finite_number(FiniteBound bound);

// Option check: an unsigned 64-bit integer written in decimal digits only. (CLI11 converts "-1"
// to 2^64-1 on the way to a uint64_t, so a range check after the conversion cannot see the sign.)
CLI::Validator unsigned_integer();

// Where a CSV result's resolved config goes: FILE.csv -> FILE.config.toml.
std::filesystem::path config_path_for(const std::filesystem::path& csv);

int run_main(int argc, char** argv);

}  // namespace p0sim::cli
