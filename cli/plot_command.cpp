// Placeholder: `p0sim plot` is being written (issue 4).
#include "cli/commands.hpp"
namespace p0sim::cli {
void add_plot_command(CLI::App&) {}
}  // namespace p0sim::cli
