// Placeholder until the sim subcommands land (issue 3).
#include "cli/commands.hpp"
namespace p0sim::cli {
void add_sim_commands(CLI::App&) {}
}  // namespace p0sim::cli
